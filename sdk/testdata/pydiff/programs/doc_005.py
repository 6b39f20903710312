d = sparse("film", k=1)[0]
print(d.url)
