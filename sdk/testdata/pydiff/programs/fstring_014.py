for d in sparse("born", k=4):
    print(f"{d.title:<25.25}|{len(d.text):>5}|")
