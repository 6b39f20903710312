d = {"b": 1, "a": 2}
for k, v in sorted(d.items()):
    print(k, v)
print({**d, "c": 3})
print(dict(zip("abc", range(3))))
