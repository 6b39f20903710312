print(type(1) == int, type("a") is str, type(None) is type(None), type([]) == list)
