# sandbox: unsupported_feature
print(sparse.__globals__)
