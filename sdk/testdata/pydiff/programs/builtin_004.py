print(sum([1, 2, 3]), sum([0.5, 0.25], 1), max(3, 9, 2), min("b", "a"), len({1: 2}), any([]), all([]))
