title = None
for d in sparse("Lit band", k=5):
    if "band" in d.text:
        title = d.title
        break
print(title or "unknown")
