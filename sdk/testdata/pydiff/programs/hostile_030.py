# sandbox: unsupported_feature
class A:
    def __init__(self):
        self.x = 1
print(A().x)
