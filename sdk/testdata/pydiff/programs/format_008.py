print("{:,}".format(1234567), "{:_}".format(1234567), "{:08.2f}".format(-3.5), "{:+d}".format(5))
