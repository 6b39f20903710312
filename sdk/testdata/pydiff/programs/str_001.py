d = sparse("Robin Hood", k=1)[0]
t = d.text
print(t.upper()[:40])
print(t.lower()[:40])
print(t.title()[:40])
print(t[:50].swapcase())
