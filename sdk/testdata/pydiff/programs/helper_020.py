def summarize(docs, width=60):
    lines = []
    for i, d in enumerate(docs, start=1):
        lines.append("%d. %s" % (i, d.text[:width]))
    return "\n".join(lines)

print(summarize(sparse(question, k=3)))
