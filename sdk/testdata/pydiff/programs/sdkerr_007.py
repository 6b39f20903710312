print("start")
x = dense(question, k=3)
print(fuse(x, k=-1))
