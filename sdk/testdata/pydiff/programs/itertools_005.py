import itertools
print(list(itertools.accumulate([1, 2, 3, 4])), list(itertools.chain.from_iterable([[1], [2, 3]])), list(itertools.zip_longest("ab", "c", fillvalue="-")))
