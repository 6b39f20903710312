from functools import cmp_to_key
def cmp(a, b):
    return (len(a) > len(b)) - (len(a) < len(b))
print(sorted(["ccc", "a", "bb"], key=cmp_to_key(cmp)))
