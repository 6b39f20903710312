title = sparse("Lit band", k=1)[0].title
print(title.removeprefix("Lit").strip(), title.removesuffix(")"), title.expandtabs())
