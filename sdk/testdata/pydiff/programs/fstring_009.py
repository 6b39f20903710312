x, name = 3.14159, "pi"
print(f"{name}={x:.3f}", f"{name!r:>8}", f"{x:10.2f}|", f"{{literal}}", f"{x*2:.1f}")
