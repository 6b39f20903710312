s = "Björn Bengtsson – Gaboš"
print(len(s), s[:5], s[-5:], s[::-1], s.upper(), s.find("–"))
