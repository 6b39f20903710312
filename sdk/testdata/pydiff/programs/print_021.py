print("=" * 20)
print("RESULTS".center(20))
print("=" * 20)
