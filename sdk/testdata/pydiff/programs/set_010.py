print({1, 2, 3} == {3, 2, 1}, {1} < {1, 2}, set("abc") == set("cba"), sorted({x % 3 for x in range(10)}))
