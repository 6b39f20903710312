results = sparse("German footballer", k=5)
print("Found", len(results), "results")
for r in results[:3]:
    print(r)
