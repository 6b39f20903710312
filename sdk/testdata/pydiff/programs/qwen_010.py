# question: which studio made the serial Flash Gordon's Trip to Mars
q1 = "Flash Gordon's Trip to Mars serial"
hop1 = sparse(q1, k=3)
studio = None
for d in hop1:
    if "Universal" in d.text:
        studio = "Universal Pictures"
print("Studio:", studio)
if studio is None:
    print(dense(q1, k=2))
else:
    print(hop1[:1])
