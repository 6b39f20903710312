print(next((d.title for d in sparse("American", k=10) if "band" in d.text), "none"))
