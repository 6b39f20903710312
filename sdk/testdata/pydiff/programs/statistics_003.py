import statistics
print(statistics.mean([1, 2, 3, 4]), statistics.median([1, 3, 2, 4]), statistics.median_low([1, 3, 2, 4]), round(statistics.stdev([1, 2, 3, 4]), 6))
