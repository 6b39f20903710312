# question: who directed the 2018 film Robin Hood
for d in sparse('Otto Bathurst director', k=4):
    print(d.title)
