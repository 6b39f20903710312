# sandbox: budget_exceeded|unsupported_feature
f = lambda g, n: g(g, n + 1)
f(f, 0)
