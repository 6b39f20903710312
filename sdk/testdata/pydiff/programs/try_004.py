try:
    1 / 0
except ZeroDivisionError as e:
    print("zero:", e)
else:
    print("no error")
