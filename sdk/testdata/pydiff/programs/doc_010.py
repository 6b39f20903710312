d = dense(question, k=1)[0]
print(d.contents.split("\n")[0], d.contents.startswith('"' + d.title))
