print(type(1).__name__ if False else "no dunder", type(1) == int, type("a") is str, type(None) is type(None))
