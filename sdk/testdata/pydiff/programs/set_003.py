# question: who composed Christus Apollo
s1 = {d.id for d in sparse('Christus Apollo cantata', k=10)}
s2 = {d.id for d in dense('Christus Apollo cantata', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
