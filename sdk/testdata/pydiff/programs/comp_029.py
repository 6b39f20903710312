print(next((d.title for d in sparse("American", k=10) if "zzzz" in d.text), "none"))
