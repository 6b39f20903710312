print("abc" < "abd", "Z" < "a", "apple" in "pineapple", "abc"[1], "abc"[-1], "abcdef"[1:5:2])
