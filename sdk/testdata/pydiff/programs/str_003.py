t = sparse("Robin Hood", k=1)[0].text
print(t.split(", ")[:4])
print(t.rsplit(" ", 2)[-2:])
print(t.partition(" by ")[0])
