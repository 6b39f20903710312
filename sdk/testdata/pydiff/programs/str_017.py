s = "a\tb"
print(repr(s), s.expandtabs(4), repr("\\"), repr("it's"), repr('say "hi"'), repr("both ' and \""))
