print("hello".startswith("he"), "hello".endswith(("lo", "x")), "Hello World".istitle(), "abc123".isalnum(), "  ".isspace())
