docs = sparse("American film", k=6)
by_id = {d.id: d.title for d in docs}
print(by_id)
