raise ValueError("no answer found")
