d = {"a": 1}
print("ok")
print(d["missing"])
