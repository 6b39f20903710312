import collections
cnt = collections.Counter()
for d in sparse("film", k=10):
    cnt.update(d.routes)
    cnt[d.title[0]] += 1
print(cnt.most_common(3), sum(cnt.values()))
