xs = [1, 2]
try:
    xs[5]
except (IndexError, KeyError) as e:
    print("IndexError:", e)
