print("%d items, %i ok, %5.1f%% done, %s" % (3, 2, 66.666, [1, 2]))
