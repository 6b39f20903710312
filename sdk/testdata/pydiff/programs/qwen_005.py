# question: who directed the film Last Vegas and when was it released
import re
docs = sparse("Last Vegas film directed", k=5)
for d in docs:
    m = re.search(r"directed by ([A-Z][a-z]+(?: [A-Z][a-z]+)*)", d.text)
    year = re.search(r"\b(19|20)\d{2}\b", d.text)
    print(f"{d.title}: director={m.group(1) if m else 'N/A'}, year={year.group(0) if year else 'N/A'}")
