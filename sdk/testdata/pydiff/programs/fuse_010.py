a = sparse("American actor", k=5)
b = sparse("American film", k=5)
print([d.title for d in fuse([a, b])])
print([d.title for d in fuse([b, a])])
