docs = dense(question, k=3)
top = docs[0] if docs else None
if top is not None and top.score > 0.5:
    print("confident:", top.title)
elif top is not None:
    print("weak:", top.title, top.score)
