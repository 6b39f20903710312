docs = sparse('Ángel Recasens Cambrils', k=3)
for d in docs:
    print(d.title + ": " + d.text[:60])
    print("   ..." + d.text[-40:])
