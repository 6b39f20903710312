def show(d, n=80):
    text = d.text
    if len(text) > n:
        text = text[:n] + "..."
    return "[" + d.title + "] " + text

for d in sparse("American film", k=4):
    print(show(d))
