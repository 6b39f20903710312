# question: who directed Last Vegas
s1 = {d.id for d in sparse('Last Vegas 2013 comedy film', k=10)}
s2 = {d.id for d in dense('Last Vegas 2013 comedy film', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
