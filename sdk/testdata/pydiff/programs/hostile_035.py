# sandbox: unsupported_feature
x = input()
print(x)
