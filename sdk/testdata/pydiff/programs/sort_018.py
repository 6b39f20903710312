print(list(reversed([d.title for d in sparse("song", k=4)])))
