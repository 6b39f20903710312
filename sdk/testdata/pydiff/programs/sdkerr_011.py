print(dedup("abc"))
