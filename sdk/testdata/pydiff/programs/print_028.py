print("Björn", "Ángel", "Gaboš", "–")
print(["Björn", "–"])
