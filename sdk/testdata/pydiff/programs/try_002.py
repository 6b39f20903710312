d = {"a": 1}
try:
    print(d["b"])
except KeyError as e:
    print("missing key", e)
finally:
    print("done")
