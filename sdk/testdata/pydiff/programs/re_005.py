import re
print(re.fullmatch(r"\d+", "123") is not None, re.fullmatch(r"\d+", "12a"), re.sub(r"(\w)(\w*)", lambda m: m.group(1).upper() + m.group(2), "hello world"))
