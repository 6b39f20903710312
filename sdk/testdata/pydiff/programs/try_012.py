for q in ["Baymax", "Casablanca"]:
    try:
        d = sparse(q, k=1)[0]
        print(q, "->", d.title)
    except Exception as e:
        print(q, "failed", e)
