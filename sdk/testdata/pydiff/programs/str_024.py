print(" | ".join(sorted(d.title for d in sparse("American", k=6))))
