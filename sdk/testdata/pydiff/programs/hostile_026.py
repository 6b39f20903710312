# sandbox: unsupported_feature
from os import path
print(path.exists('/'))
