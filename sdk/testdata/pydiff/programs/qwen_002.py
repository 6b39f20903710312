# question: when was the star of Rebel Without a Cause born
queries = ["James Dean actor", "Rebel Without a Cause star", question]
all_docs = []
for q in queries:
    all_docs.extend(sparse(q, k=5))
    all_docs.extend(dense(q, k=5))
unique = dedup(all_docs)
print(f"Retrieved {len(all_docs)} docs, {len(unique)} unique")
top = rerank(question, unique, k=3)
for d in top:
    print(f"- {d.title} (score: {d.score:.3f})")
print(top[:1])
