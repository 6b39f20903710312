try:
    pass
except Exception:
    print("never")
else:
    print("else runs")
finally:
    print("finally runs")
