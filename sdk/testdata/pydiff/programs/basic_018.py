# question: who wrote Song of Solomon
for d in sparse('Toni Morrison author', k=4):
    print(d.title)
