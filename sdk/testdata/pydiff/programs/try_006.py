def safe_top(q):
    try:
        return sparse(q, k=1)[0].title
    except IndexError:
        return None

print(safe_top("Baymax"), safe_top("qqqqq"))
