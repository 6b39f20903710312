# question: what is the main airport of Casablanca
s1 = {d.id for d in sparse('Casablanca airport', k=10)}
s2 = {d.id for d in dense('Casablanca airport', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
