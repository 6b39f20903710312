text = dense(question, k=1)[0].text
words = text.split()
print(len(words), words[:5], " ".join(words[-3:]))
