print(isinstance(1, int), isinstance("s", str), isinstance(1.0, (int, float)), isinstance([], list), isinstance(sparse("film", k=1)[0], Doc))
