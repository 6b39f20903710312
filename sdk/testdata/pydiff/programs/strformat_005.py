for i, d in enumerate(sparse("film", k=3)):
    print("{}) {:<25}{:>8.2f}".format(i + 1, d.title[:25], d.score))
