for w in {"film", "song", "band", "novel"}:
    print(w, len(sparse(w, k=5)))
