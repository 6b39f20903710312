# question: where is Wytheville located
for d in sparse('Wythe County seat', k=4):
    print(d.title)
