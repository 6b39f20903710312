d = {"x": 1, "y": 2}
print(d.pop("x"), d, d.pop("z", None), "y" in d, len(d))
d["w"] = [1]
del d["y"]
print(d)
