def best(q, k=5, min_score=0.0):
    docs = fuse([dense(q, k=k), sparse(q, k=k)])
    return [d for d in docs if d.score > min_score][:k]

print(best(question, 3))
