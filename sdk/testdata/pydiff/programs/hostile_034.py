# sandbox: unsupported_feature
print(globals())
