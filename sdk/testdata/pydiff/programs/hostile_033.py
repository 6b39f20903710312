# sandbox: unsupported_feature
d = sparse("film", k=1)[0]
print(getattr(d, "__class__"))
