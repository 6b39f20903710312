# question: who directed Night of the Twelve
for d in sparse('Hans Schweikart', k=4):
    print(d.title)
