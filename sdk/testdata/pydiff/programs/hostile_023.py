# sandbox: unsupported_feature
print(eval("1 + 1"))
