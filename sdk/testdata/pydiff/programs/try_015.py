try:
    sparse(question, k=0)
except Exception as e:
    print("bad k:", e)
