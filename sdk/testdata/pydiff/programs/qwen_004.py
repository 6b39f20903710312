# question: which airport serves Casablanca
docs = sparse("Casablanca airport", k=10)
keywords = ["airport", "international", "mohammed"]
scored = []
for d in docs:
    text = d.text.lower()
    hits = sum(1 for kw in keywords if kw in text)
    scored.append((hits, d))
scored.sort(key=lambda x: x[0], reverse=True)
print("Keyword hits:", [h for h, _ in scored])
best = [d for h, d in scored if h > 0]
print(best[:2] if best else "nothing")
