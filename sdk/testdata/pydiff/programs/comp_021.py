matrix = [[i * j for j in range(4)] for i in range(3)]
print(matrix)
print([row[-1] for row in matrix])
