try:
    x = int("abc")
except ValueError as e:
    print("bad int:", e)
