import re
t = sparse("Robin Hood", k=1)[0].text
print(re.findall(r"\b\d{4}\b", t))
print(re.search(r"directed by ([A-Z]\w+ [A-Z]\w+)", t).group(1))
