import re
texts = [d.text for d in sparse("American", k=10)]
years = sorted({int(y) for t in texts for y in re.findall(r"\b(1[89]\d\d|20\d\d)\b", t)})
print(years)
