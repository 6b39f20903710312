docs = sparse("film", k=2)
print("first:", docs[0].title, "| second:", docs[1].title)
