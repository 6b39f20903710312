print("%s has %d docs (%.1f%%)" % ("query", 7, 43.75))
print("%5s|%-5s|" % ("ab", "cd"))
print("%r %r" % ("x", 1.5))
