try:
    raise ValueError("custom message")
except ValueError as e:
    print("caught", str(e))
