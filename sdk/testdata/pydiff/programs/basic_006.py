# question: when was James Dean born
for d in sparse('James Dean birth date', k=4):
    print(d.title)
