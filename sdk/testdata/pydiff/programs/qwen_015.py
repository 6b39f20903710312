# question: which German film of 1949 was made at the Bavaria Studios
import math
docs = sparse("1949 German film Bavaria Studios", k=6)
norm = math.sqrt(sum(d.score ** 2 for d in docs)) or 1.0
for d in docs:
    print(f"{d.title:<35} {d.score / norm:.3f}")
print(docs[0])
