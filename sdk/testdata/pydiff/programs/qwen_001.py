# question: who directed the 2018 film Robin Hood
# Step 1: find the film
film_docs = sparse("Robin Hood 2018 film", k=5)
print("=== Film search ===")
for i, d in enumerate(film_docs[:3]):
    print(f"[{i+1}] {d.title}: {d.text[:150]}")

# Step 2: look for the director
director_docs = dense("Robin Hood 2018 directed by", k=5)
combined = fuse([film_docs, director_docs])
print("\n=== Combined ===")
print(combined[:2])
