print("a" "b", "x" + "y" * 2, "abc".encode() if False else "no bytes", "é".upper(), "ß".upper(), "İ".lower() == "i̇")
