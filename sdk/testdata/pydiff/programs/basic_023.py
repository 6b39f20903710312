# question: where is Wytheville located
docs = dense('Wytheville Virginia town', k=5)
print(docs[:2])
