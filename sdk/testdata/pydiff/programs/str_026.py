name = "otto bathurst"
print(name.title(), " ".join(w.capitalize() for w in name.split()), name.upper().split())
