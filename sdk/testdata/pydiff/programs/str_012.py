print("The Quick".lower().split(), "a-b-c".split("-", 1), "CamelCase".casefold(), "x".join("abc"))
