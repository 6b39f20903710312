print("abc".center(9, "*"), "abc".ljust(6, "."), "abc".rjust(6), "42".zfill(5), "-42".zfill(5))
