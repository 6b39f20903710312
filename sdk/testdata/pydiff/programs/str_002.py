t = sparse("Robin Hood", k=1)[0].text
print(len(t), t.count("Robin"), t.find("Otto"), t.rfind("the"), t.index("film"))
