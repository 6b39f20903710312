import re
for d in sparse("born", k=6):
    m = re.search(r"\((?:born )?([^)]*\d{4}[^)]*)\)", d.text)
    print(d.title, "->", m.group(1) if m else None)
