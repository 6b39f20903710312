print("%(name)s is %(age)d" % {"name": "Ann", "age": 30})
print("%s" % (1,))
print("%s %s" % ("a", None))
