from itertools import groupby
docs = sorted(sparse("American", k=10), key=lambda d: d.title[0])
for k, g in groupby(docs, key=lambda d: d.title[0]):
    print(k, [d.title for d in g])
