docs = sparse("song", k=5)
flags = [("Garth" in d.text) for d in docs]
print(flags, flags.count(True))
