import re
m = re.search(r"(?P<month>[A-Z][a-z]+) (?P<day>\d+), (?P<year>\d{4})", sparse("James Dean", k=1)[0].text)
print(m.group("year"), m.groupdict(), m.start(), m.span())
