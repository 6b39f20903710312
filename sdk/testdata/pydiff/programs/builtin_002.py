print(list(map(len, ["a", "bb", "ccc"])), list(filter(None, [0, 1, "", "x"])), list(zip([1, 2], "ab")), list(enumerate("ab", start=1)))
