total = 0
for s in ["1", "2", "x", "4"]:
    try:
        total += int(s)
    except ValueError:
        print("skip", s)
print(total)
