print("hello world".replace("o", "0"), "hello".replace("l", "L", 1), "-".join(["a", "b", "c"]), "ab" * 3)
