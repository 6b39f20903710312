# question: when was James Dean born
s1 = {d.id for d in sparse('James Dean actor', k=10)}
s2 = {d.id for d in dense('James Dean actor', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
