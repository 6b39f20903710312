print(bool(""), bool("x"), bool([]), bool([0]), int(True) + 1, float("inf") > 1e308, str(None), bool(None))
