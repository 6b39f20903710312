# question: what nationality is the footballer Anton Shunto
candidates = {}
for q in ["Anton Shunto footballer", "Belarusian professional footballer"]:
    for d in sparse(q, k=5):
        candidates[d.id] = candidates.get(d.id, 0) + d.score
ranked = sorted(candidates.items(), key=lambda kv: -kv[1])
for doc_id, score in ranked[:3]:
    print(f"{doc_id}: {score:.2f}")
print(doc(ranked[0][0]))
