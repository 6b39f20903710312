d = sparse("Robin Hood", k=1)[0]
print(d.text[:100])
print(d.text[100:160])
print(len(d.text), len(d.contents))
