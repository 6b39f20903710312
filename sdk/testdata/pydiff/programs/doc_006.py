d = sparse("film", k=1)[0]
print(isinstance(d, Doc), isinstance(d.score, float), isinstance(d.routes, tuple), type(d.id) is str)
