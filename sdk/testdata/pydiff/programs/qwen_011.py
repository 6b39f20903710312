# question: what band was formed in Fullerton California in 1995
import json
docs = sparse("rock band formed 1995 Fullerton California", k=5)
summary = [{"title": d.title, "score": round(d.score, 2), "has_year": "1995" in d.text} for d in docs]
print(json.dumps(summary, indent=1))
