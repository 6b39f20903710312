try:
    x = undefined_name
except NameError as e:
    print("name:", e)
