try:
    try:
        {}["k"]
    except KeyError:
        raise ValueError("wrapped")
except ValueError as e:
    print("outer", e)
