import string
print(string.ascii_lowercase, string.digits, string.punctuation)
t = sparse("Robin Hood", k=1)[0].title
print("".join(c for c in t if c not in string.punctuation))
