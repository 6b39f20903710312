import functools
docs = sparse("American", k=10)
longest = functools.reduce(lambda a, b: a if len(a.text) >= len(b.text) else b, docs)
print(longest.title, len(longest.text))
