docs = sparse("American", k=8)
lens = {d.title: len(d.text) for d in docs if len(d.text) < 400}
print(lens)
