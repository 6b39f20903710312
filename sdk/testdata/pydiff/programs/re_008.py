import re
print(re.findall(r"(\w+)=(\d+)", "a=1, b=22, c=x"), re.IGNORECASE == re.I, re.findall("hood", "Robin HOOD hood", re.I))
