# sandbox: unsupported_feature
breakpoint()
