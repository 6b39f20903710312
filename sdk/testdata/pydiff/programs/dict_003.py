groups = {}
for d in fuse(sparse("German footballer", k=10), dense("German footballer", k=10)):
    key = "/".join(d.routes)
    groups.setdefault(key, []).append(d.title)
for k in sorted(groups):
    print(k, len(groups[k]), groups[k][:2])
