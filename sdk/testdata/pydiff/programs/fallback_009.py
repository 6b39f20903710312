docs = sparse("qqqq zzzz", k=5)
if len(docs) == 0:
    print("sparse found nothing, trying dense")
    docs = dense("qqqq zzzz", k=3)
print([d.title for d in docs])
