from string import ascii_uppercase, capwords
print(ascii_uppercase[:5], capwords("hello   big world"))
print(sum(1 for c in question if c in ascii_uppercase))
