docs = sparse("film", k=4)
d = doc(docs[2].id)
print(d == docs[2], d.title, d.score == docs[2].score)
