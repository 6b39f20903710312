groups = {}
for d in fuse(sparse("American actor", k=10), dense("American actor", k=10)):
    key = "/".join(d.routes)
    groups.setdefault(key, []).append(d.title)
for k in sorted(groups):
    print(k, len(groups[k]), groups[k][:2])
