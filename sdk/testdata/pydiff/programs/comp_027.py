print(sum(1 for d in sparse("American", k=20) if "film" in d.text))
