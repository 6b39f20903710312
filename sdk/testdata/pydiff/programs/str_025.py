s = "Mississippi"
print(s.count("ss"), s.find("ss", 3), s.replace("ss", "SS"), s.split("s"), s.strip("Mi"))
