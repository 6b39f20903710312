texts = [d.text for d in sparse("American", k=5)]
print([t.split(".")[0][:40] for t in texts])
