# sandbox: unsupported_feature
os = __import__("os")
print(os.getcwd())
