def first_sentence(text):
    i = text.find(". ")
    return text if i < 0 else text[:i + 1]

for d in sparse("born American", k=5):
    print(d.title + ":", first_sentence(d.text))
