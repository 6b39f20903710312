titles = [d.title for d in sparse("song", k=5)]
print("\n".join(titles))
