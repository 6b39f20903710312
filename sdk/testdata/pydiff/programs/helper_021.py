def norm(s):
    return " ".join(s.lower().split())

print(norm("  Robin   HOOD  film "))
print(norm(sparse("Robin", k=1)[0].title))
