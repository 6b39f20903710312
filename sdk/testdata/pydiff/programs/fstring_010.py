d = {"a": 1}
print(f"{d['a']} {d}")
print(f"{'nested' + 'quotes'}")
w = 6
print(f"{3.14159:{w}.2f}|")
