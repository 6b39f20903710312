print(bool(sparse("film", k=1)[0]), len(sparse("film", k=1)), sparse("zzzzqq", k=3) == [])
