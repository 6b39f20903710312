# question: who was the grandfather of Muhammad
docs = sparse("grandfather of Muhammad Abd al-Muttalib", k=5)
lines = []
for d in docs:
    first = d.text.split(". ")[0]
    lines.append(f"{d.title} -> {first[:120]}")
print("\n".join(lines))
