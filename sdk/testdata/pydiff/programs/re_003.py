import re
print(re.sub(r"\s+", " ", "a   b \t c"), re.split(r"[,;] ?", "a, b;c"), re.match(r"(\w+)@(\w+)", "me@host").groups())
