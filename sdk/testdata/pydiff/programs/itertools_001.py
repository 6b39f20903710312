from itertools import chain, islice
all_docs = list(chain(sparse("film", k=3), dense("film", k=3)))
print([d.id for d in all_docs])
print(list(islice(range(100), 2, 10, 3)))
