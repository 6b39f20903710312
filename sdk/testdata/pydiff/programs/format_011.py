print("{:.1%}".format(0.4567), "{:10.3e}".format(12345.678), "{!r}".format("q"))
