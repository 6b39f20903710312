# question: what is the main airport of Casablanca
for d in sparse('Mohammed V International Airport', k=4):
    print(d.title)
