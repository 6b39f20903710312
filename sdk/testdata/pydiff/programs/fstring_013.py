items = ["a", "b"]
print(f"items: {', '.join(items)}; count={len(items)}; first={items[0]!r}")
