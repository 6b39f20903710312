docs = dense(question, k=0)
