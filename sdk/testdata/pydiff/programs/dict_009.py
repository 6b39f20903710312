d = dict.fromkeys(["a", "b", "c"], 0)
d.update({"b": 2}, c=3)
print(d, list(d.keys()), list(d.values()), list(d.items()))
