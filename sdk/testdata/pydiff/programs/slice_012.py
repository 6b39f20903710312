for d in sparse("born", k=10):
    t = d.text
    print(t[10:30], t[::50][:8], len(t) - t.count(" "))
