print("%-10s|" % "Björn", "{:>8}|".format("Gaboš"), "Ángel".ljust(8, "_"), "–".center(5, "-"))
