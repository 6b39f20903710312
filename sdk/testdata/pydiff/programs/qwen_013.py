# question: which Disney character is Baymax
MAX_PRINT = 2
evidence = []
for q in ["Baymax", "Baymax Big Hero 6 character", question]:
    for d in sparse(q, k=3):
        if d not in evidence:
            evidence.append(d)
print(f"Collected {len(evidence)} pieces of evidence")
print(evidence[:MAX_PRINT])
