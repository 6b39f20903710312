from statistics import mean, median, mode
lens = [len(d.text) for d in dense(question, k=9)]
print(lens, mean(lens), median(lens), mode([1, 1, 2]))
