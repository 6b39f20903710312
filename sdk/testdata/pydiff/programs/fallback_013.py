res = sparse("Mohamud president Somalia", k=3)
answer = res[0].title if res and res[0].score > 3 else "not confident"
print("answer:", answer)
