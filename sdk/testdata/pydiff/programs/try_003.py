xs = [1, 2]
try:
    xs[5]
except (IndexError, KeyError) as e:
    print(type(e).__name__ if False else "IndexError:", e)
