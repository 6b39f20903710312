# sandbox: unsupported_feature
print(open("/etc/passwd").read())
