try:
    int(None)
except (TypeError, ValueError) as e:
    print("conv:", e)
