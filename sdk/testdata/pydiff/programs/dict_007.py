groups = {}
for d in fuse(sparse("record label Los Angeles", k=10), dense("record label Los Angeles", k=10)):
    key = "/".join(d.routes)
    groups.setdefault(key, []).append(d.title)
for k in sorted(groups):
    print(k, len(groups[k]), groups[k][:2])
