def extract_years(text):
    years = []
    for tok in text.replace("(", " ").replace(")", " ").replace(",", " ").split():
        if tok.isdigit() and 1000 <= int(tok) <= 2100:
            years.append(int(tok))
    return years

for d in sparse("born", k=6):
    print(d.title, extract_years(d.text))
