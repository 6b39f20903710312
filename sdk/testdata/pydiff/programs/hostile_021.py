# sandbox: unsupported_feature
with open("/tmp/x", "w") as f:
    f.write("x")
