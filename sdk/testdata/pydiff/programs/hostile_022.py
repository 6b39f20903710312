# sandbox: unsupported_feature
exec("print(1)")
