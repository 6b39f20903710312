print(fuse([]), fuse(), dedup([]))
d = sparse("film", k=3)
print(len(dedup(d + d)), fuse(d)[0].score == 1 / 61)
