package testutil

// FaissHNSWSearchPy is Python (for RunPython, after `import faiss, numpy as
// np`) defining hnsw_search(hnsw, xb, q, k, ef, fixed, l2=False): a port of
// faiss's IndexHNSW search (faiss/impl/HNSW.cpp: greedy descent on the
// upper levels, then search_from_candidates over a MinimaxHeap of ef
// entries with check_relative_distance), reading the graph through the
// Python API and scoring with float32 numpy dots. It returns an (nq, k)
// int64 array of storage rows. With fixed=False it keeps the bug of faiss
// ≤ 1.7.3, where MinimaxHeap.push counts an evicted entry that was already
// popped as a valid candidate and so ends the search early; faiss 1.7.4
// fixed it (facebookresearch/faiss pull request #2771, "Fix bug of HNSW",
// 2023-04), which raises recall at the same efSearch. Debian ships faiss
// 1.7.3, so tests check the port with fixed=False against faiss's own
// search, then compare with fixed=True: the search of every faiss since.
// The distance is −q·x, or ‖q − x‖² with l2=True.
const FaissHNSWSearchPy = `
def hnsw_search(hnsw, xb, q, k, ef, fixed, l2=False):
    lv = faiss.vector_to_array(hnsw.levels)
    off = faiss.vector_to_array(hnsw.offsets).astype(np.int64)
    nb = faiss.vector_to_array(hnsw.neighbors)
    cum = faiss.vector_to_array(hnsw.cum_nneighbor_per_level).astype(np.int64)
    def nbrs(v, l):
        s = nb[off[v] + cum[l]: off[v] + cum[l + 1]]
        out = []
        for u in s:
            if u < 0:
                break
            out.append(int(u))
        return out
    out = np.full((len(q), k), -1, dtype=np.int64)
    size = max(ef, k)
    for qi in range(len(q)):
        qv = q[qi]
        dist = (lambda v: float(np.sum((xb[v] - qv) ** 2))) if l2 else (lambda v: -float(np.dot(xb[v], qv)))
        ep = hnsw.entry_point
        de = dist(ep)
        for l in range(hnsw.max_level, 0, -1):
            while True:
                prev = ep
                for u in nbrs(ep, l):
                    du = dist(u)
                    if du < de:
                        ep, de = u, du
                if ep == prev:
                    break
        ids, dis, nvalid = [], [], 0   # the MinimaxHeap: popped entries keep their slot with id -1
        def push(i, v):
            nonlocal nvalid
            if len(ids) == size:
                m = max(range(size), key=lambda j: dis[j])
                if v >= dis[m]:
                    return
                if ids[m] != -1 or not fixed:
                    nvalid -= 1
                del ids[m], dis[m]
            ids.append(i); dis.append(v); nvalid += 1
        push(ep, de)
        res, seen = [(de, ep)], {ep}
        while nvalid > 0:
            j = min((j for j in range(len(ids)) if ids[j] != -1), key=lambda j: dis[j], default=-1)
            if j < 0:
                break
            v0, d0 = ids[j], dis[j]
            ids[j] = -1; nvalid -= 1
            if sum(1 for x in dis if x < d0) >= ef:
                break
            new = [u for u in nbrs(v0, 0) if u not in seen]
            seen.update(new)
            if not new:
                continue
            ds = np.sum((xb[new] - qv) ** 2, axis=1) if l2 else -(xb[new] @ qv)   # one numpy call per expansion
            for u, du in zip(new, ds.tolist()):
                res.append((du, u))
                push(u, du)
        res.sort()
        top = [u for _, u in res[:k]]
        out[qi, :len(top)] = top
    return out
`
