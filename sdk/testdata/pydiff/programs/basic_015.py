# question: who directed Last Vegas
for d in sparse('Jon Turteltaub director', k=4):
    print(d.title)
