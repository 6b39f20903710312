# question: who directed the 2018 film Robin Hood
s1 = {d.id for d in sparse('Robin Hood 2018 film', k=10)}
s2 = {d.id for d in dense('Robin Hood 2018 film', k=10)}
print("both:", sorted(s1 & s2))
print("only sparse:", len(s1 - s2), "union:", len(s1 | s2))
