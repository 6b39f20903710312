titles = set(d.title.split()[0] for d in sparse("American", k=8))
print(titles)
