try:
    "a" + 1
except TypeError as e:
    print("type error:", e)
