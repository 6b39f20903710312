import re
pat = re.compile(r"[A-Z][a-z]+")
t = dense(question, k=1)[0].text
print(pat.findall(t)[:8], len(pat.findall(t)))
