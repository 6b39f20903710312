q1 = "Robin Hood 2018 film director"
d1 = sparse(q1, k=3)
director = None
for d in d1:
    i = d.text.find("directed by ")
    if i >= 0:
        director = " ".join(d.text[i + 12:].split()[:2])
        break
print("director:", director)
if director:
    print(sparse(director, k=2))
