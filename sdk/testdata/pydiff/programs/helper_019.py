make_query = lambda *parts: " ".join(p for p in parts if p)
print(make_query("Robin", "", "Hood", None, "director"))
print(sparse(make_query("Robin", "Hood"), k=1))
