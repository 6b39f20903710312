print(str(12).isdigit(), "½".isdigit(), "3.5".replace(".", "", 1).isdigit(), "abc".isalpha(), "ABC".isupper(), "abc".islower())
