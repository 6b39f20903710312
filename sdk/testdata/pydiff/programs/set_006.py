# question: who wrote Song of Solomon
s1 = {d.id for d in sparse('Song of Solomon novel', k=10)}
s2 = {d.id for d in dense('Song of Solomon novel', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
