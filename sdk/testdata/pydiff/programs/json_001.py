import json
docs = sparse(question, k=2)
print(json.dumps([{"id": d.id, "title": d.title, "score": d.score} for d in docs]))
