print("%s" % "ü", ord("ü"), chr(252), chr(0x2013), ord("A"), [ord(c) for c in "hi"])
