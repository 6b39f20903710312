for d in sparse("Virginia", k=3):
    print(f"- {d.title} ({d.id})")
