t = "  padded text\t\n"
print(repr(t.strip()), repr(t.lstrip()), repr(t.rstrip()), repr("xxhixx".strip("x")))
