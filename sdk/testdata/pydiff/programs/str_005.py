print("a,b,,c".split(","), "a b  c".split(), "line1\nline2\r\nline3".splitlines(), "abc".split("b"))
