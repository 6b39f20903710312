package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/peers"
)

// Flat measures exact flat inner-product search (ann.Flat, fp32, k = 10) on
// the real vector sets ("flat.data", default bge-base,sift10k,fmnist; quick
// bge-base; a generated set by name, uniform-NxD or clustered-NxD, see
// GenVectorSet, written to Work/vectors/<name>-seed<S>/ for peers) for every thread count and batch size ("flat.batch", default
// 1,64,256; quick 1,64); "flat.n" and "flat.queries" keep only the
// first base rows and queries (the truth is then recomputed). recall@10 against the truth is in Extra (1.0
// for fp32: the check that the fast path is exact); "flat.dtype" (fp32,
// fp16, int8) changes the storage; "flat.int8scan" N ≥ 1 (with fp32 or
// fp16 storage) scans int8 codes for the top k+N and re-ranks them on the
// storage (ann.(*Flat).Int8Scan); over fp32 it keeps faiss's key, so that
// the ratio against faiss fp32 forms (default: no int8 scan).
func Flat() bench.Suite {
	return bench.Suite{Name: "flat", Doc: "exact flat search (ann.Flat) on bge-base, SIFT and Fashion-MNIST vectors: queries/s by threads and batch", Setup: setupFlat}
}

// HNSW measures ann.HNSW (M = 16, efConstruction = 100, seed 1; "hnsw.M",
// "hnsw.efc") on the real vector sets ("hnsw.data", default all three;
// quick bge-base) at efSearch "hnsw.ef" (default 16,64,128; quick
// 32,128): one query per call on 1 thread (per-query latency) and batches
// of 64 on every other thread count ("hnsw.batch" = 1,64 runs both sizes
// on every thread count); recall@10 and resident bytes per vector
// (HNSW.MemoryBytes) in Extra. "hnsw.n" and "hnsw.queries" cap the rows as
// for flat. "hnsw.compressed" = true adds, for every case, the same graph
// compressed (HNSW.Compress: int8 traversal, fp16 re-rank from a rows file
// in Work/hnsw, memory-mapped), configs suffixed " compressed";
// "hnsw.int8" = true the same graph with int8 traversal re-ranked on its
// float32 vectors in memory (HNSW.TraverseInt8, rlsearch --hnsw-int8),
// configs suffixed " int8".
func HNSW() bench.Suite {
	return bench.Suite{Name: "hnsw", Doc: "HNSW search (ann.HNSW) on bge-base, SIFT and Fashion-MNIST: queries/s and recall@10 by efSearch and threads", Setup: setupHNSW}
}

// searcher is ann.Flat or ann.HNSW.
type searcher interface {
	Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error)
}

// queryCycle returns the queries repeated so that any window of b rows
// starting below nq is contiguous: [nq + b, dim].
func queryCycle(vs *VectorSet, b int) []float32 {
	out := make([]float32, 0, (vs.NQ+b)*vs.Dim)
	for len(out) < (vs.NQ+b)*vs.Dim {
		out = append(out, vs.Queries...)
	}
	return out[:(vs.NQ+b)*vs.Dim]
}

// searchCase is one (index, batch, threads) measurement with its recall.
func searchCase(env *bench.Env, s searcher, vs *VectorSet, config string, params map[string]any, b, threads int, note string, before func()) (bench.Case, error) {
	return searchCaseExtra(env, s, vs, config, params, b, threads, note, before, nil)
}

// searchCaseExtra is searchCase with extra metrics in every repetition's
// Extra besides recall@10.
func searchCaseExtra(env *bench.Env, s searcher, vs *VectorSet, config string, params map[string]any, b, threads int, note string, before func(), extra map[string]float64) (bench.Case, error) {
	if before != nil {
		before()
	}
	// recall@10 over every query, searched in batches of b.
	var rows [][]int32
	for lo := 0; lo < vs.NQ; lo += b {
		hi := min(lo+b, vs.NQ)
		hits, err := s.Search(context.Background(), vs.Queries[lo*vs.Dim:hi*vs.Dim], 10)
		if err != nil {
			return bench.Case{}, err
		}
		for _, hs := range hits {
			r := make([]int32, len(hs))
			for j, h := range hs {
				r[j] = h.Row
			}
			rows = append(rows, r)
		}
	}
	recall := recallAt(rows, vs.Truth, 10)
	qc := queryCycle(vs, b)
	return bench.Case{Config: config, Params: params, Unit: "queries/s", Note: note, Threads: threads,
		Run: func(ctx context.Context) (bench.Rep, error) {
			if before != nil {
				before()
			}
			rep, err := bench.Measure(ctx, env.Budget(3), func(ctx context.Context, i int) (int, error) {
				lo := (i * b) % vs.NQ
				_, err := s.Search(ctx, qc[lo*vs.Dim:(lo+b)*vs.Dim], 10)
				return b, err
			})
			rep.Extra = map[string]float64{"recall@10": recall}
			for k, v := range extra {
				rep.Extra[k] = v
			}
			return rep, err
		}}, nil
}

func loadSets(ctx context.Context, env *bench.Env, suite, quick, full string) ([]*VectorSet, error) {
	names := list(env.Get(suite, "data", pick(env, quick, full)))
	lim, err := ints(suite+".n", env.Get(suite, "n", fmt.Sprint(1<<30)))
	if err != nil {
		return nil, err
	}
	limQ, err := ints(suite+".queries", env.Get(suite, "queries", fmt.Sprint(1<<30)))
	if err != nil {
		return nil, err
	}
	var out []*VectorSet
	for _, n := range names {
		var vs *VectorSet
		var err error
		if genName.MatchString(n) {
			dir, derr := workDir(env, filepath.Join("vectors", fmt.Sprintf("%s-seed%d", n, env.Seed)))
			if derr != nil {
				return nil, derr
			}
			fmt.Fprintf(env.Log, "vector set %s: %s\n", n, dir)
			vs, err = genVectorSet(ctx, n, env.Seed, dir, env.Log)
		} else {
			vs, err = LoadVectorSet(ctx, env.Data, n, lim[0], limQ[0])
		}
		if err != nil {
			return nil, err
		}
		out = append(out, vs)
	}
	return out, nil
}

func setupFlat(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	if _, err := dataFile(env, "vectors"); err != nil {
		return nil, nil, err
	}
	sets, err := loadSets(ctx, env, "flat", "bge-base", "bge-base,sift10k,fmnist")
	if err != nil {
		return nil, nil, err
	}
	batches, err := ints("flat.batch", env.Get("flat", "batch", pick(env, "1,64", "1,64,256")))
	if err != nil {
		return nil, nil, err
	}
	dtName := env.Get("flat", "dtype", "fp32")
	dt, err := ann.ParseDType(dtName)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: flat.dtype: %v", errConfig, err)
	}
	scanExtra := 0
	if v := env.Get("flat", "int8scan", ""); v != "" {
		n, err := ints("flat.int8scan", v)
		if err != nil || len(n) != 1 || dt == ann.INT8 {
			return nil, nil, fmt.Errorf("%w: flat.int8scan: %q: want one count of extra candidates (≥ 1) with flat.dtype fp32 or fp16", errConfig, v)
		}
		scanExtra = n[0]
	}
	var cases []bench.Case
	for _, vs := range sets {
		f, err := ann.NewFlat(vs.Base, vs.Dim, dt)
		if err != nil {
			return nil, nil, err
		}
		note := fmt.Sprintf("%s: %s; kernel %s", vs.Name, vs.Note, ann.KernelName())
		if scanExtra > 0 {
			if f, err = f.Int8Scan(scanExtra); err != nil {
				return nil, nil, err
			}
			note += fmt.Sprintf("; int8 scan, top k+%d re-ranked on the %s rows", scanExtra, dtName)
		}
		for _, t := range env.Threads {
			for _, b := range batches {
				p := map[string]any{"data": vs.Name, "n": vs.N, "dim": vs.Dim, "dtype": dtName, "k": 10, "threads": t, "batch": b}
				// The faiss peer's key (bench/peers), so that ratios form; other
				// storage types keep it apart (faiss measures fp32). An int8
				// scan over fp32 answers as fp32 search does (recall@10 in the
				// row says how far), so it keeps the key.
				config := peers.FlatConfig(vs.Name, vs.N, vs.Dim, 10, b, t)
				if dtName != "fp32" {
					config += " dtype=" + dtName
				}
				if scanExtra > 0 {
					p["int8scan_extra"] = scanExtra
				}
				c, err := searchCase(env, f, vs, config, p, b, t, note, nil)
				if err != nil {
					return nil, nil, err
				}
				cases = append(cases, c)
			}
		}
	}
	return cases, nil, nil
}

func setupHNSW(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	if _, err := dataFile(env, "vectors"); err != nil {
		return nil, nil, err
	}
	sets, err := loadSets(ctx, env, "hnsw", "bge-base", "bge-base,sift10k,fmnist")
	if err != nil {
		return nil, nil, err
	}
	efs, err := ints("hnsw.ef", env.Get("hnsw", "ef", pick(env, "32,128", "16,64,128")))
	if err != nil {
		return nil, nil, err
	}
	// "hnsw.ours_ef": widths run for ours only (rows with Params
	// "ours_only"; the peers run hnsw.ef), so that the report's
	// equal-recall table finds ours at each peer's recall on a finer grid,
	// as ann-benchmarks runs every system over its own parameters.
	var oursOnly []int
	if v := env.Get("hnsw", "ours_ef", ""); v != "" {
		if oursOnly, err = ints("hnsw.ours_ef", v); err != nil {
			return nil, nil, err
		}
	}
	allEfs := slices.Clone(efs)
	for _, ef := range oursOnly {
		if !slices.Contains(allEfs, ef) {
			allEfs = append(allEfs, ef)
		}
	}
	slices.Sort(allEfs)
	mv, err := ints("hnsw.M", env.Get("hnsw", "M", "16"))
	if err != nil {
		return nil, nil, err
	}
	efc, err := ints("hnsw.efc", env.Get("hnsw", "efc", "100"))
	if err != nil {
		return nil, nil, err
	}
	// "hnsw.batch": batch sizes run at every thread count (e.g. 1,64 for
	// the full grid); unset, batch 1 on one thread and 64 on the others.
	var grid []int
	if g := env.Get("hnsw", "batch", ""); g != "" {
		if grid, err = ints("hnsw.batch", g); err != nil {
			return nil, nil, err
		}
	}
	compressed := env.Get("hnsw", "compressed", "false") == "true"
	int8Traversal := env.Get("hnsw", "int8", "false") == "true"
	// "hnsw.plain" = false measures only the variants above (the float32
	// graph is then dropped once they are made: at 1M it is 3 GB).
	plain := env.Get("hnsw", "plain", "true") != "false"
	if !plain && !compressed && !int8Traversal {
		return nil, nil, fmt.Errorf("%w: hnsw.plain=false needs hnsw.compressed or hnsw.int8", errConfig)
	}
	var cases []bench.Case
	for _, vs := range sets {
		t0 := time.Now()
		// Progress every ~5% (a 1M × 768 build takes tens of minutes).
		last := 0
		progress := func(done, total int) {
			if done*20/total > last || done == total {
				last = done * 20 / total
				fmt.Fprintf(env.Log, "%s: HNSW build %d / %d (%.0fs)\n", vs.Name, done, total, time.Since(t0).Seconds())
			}
		}
		h, err := ann.NewHNSW(ctx, vs.Base, vs.Dim, ann.HNSWConfig{M: mv[0], EfConstruction: efc[0], Seed: 1, Progress: progress})
		if err != nil {
			return nil, nil, err
		}
		build := time.Since(t0)
		fmt.Fprintf(env.Log, "%s: built HNSW over %d × %d in %.1fs\n", vs.Name, vs.N, vs.Dim, build.Seconds())
		note := fmt.Sprintf("%s: %s; graph built in %.1fs on %d threads (GOMAXPROCS of the setup)", vs.Name, vs.Note, build.Seconds(), runtime.GOMAXPROCS(0))
		var kinds []hnswKind
		if plain {
			kinds = append(kinds, hnswKind{h: h, extra: hnswExtra(h, build)})
		}
		if compressed {
			hc, err := compressedCopy(env, vs, h)
			if err != nil {
				return nil, nil, err
			}
			kinds = append(kinds, hnswKind{h: hc, suffix: " compressed", extra: hnswExtra(hc, build)})
		}
		if int8Traversal {
			hi, err := int8Copy(env, vs, h)
			if err != nil {
				return nil, nil, err
			}
			kinds = append(kinds, hnswKind{h: hi, suffix: " int8", extra: hnswExtra(hi, build)})
		}
		if !plain {
			// The float32 graph is unreachable now (the copies hold
			// what they need): give its memory back before measuring,
			// for the peers' processes (3 GB at 1M × 768).
			debug.FreeOSMemory()
		}
		for _, ef := range allEfs {
			for _, t := range env.Threads {
				bs := grid
				if bs == nil {
					bs = []int{64}
					if t == 1 {
						bs = []int{1}
					}
				}
				for _, b := range bs {
					for _, k := range kinds {
						p := map[string]any{"data": vs.Name, "n": vs.N, "dim": vs.Dim, "M": mv[0], "efc": efc[0], "ef": ef, "k": 10, "threads": t, "batch": b}
						if !slices.Contains(efs, ef) {
							p["ours_only"] = true
						}
						config := peers.HNSWConfig(vs.Name, vs.N, vs.Dim, mv[0], efc[0], ef, 10, b, t) + k.suffix
						switch k.suffix {
						case " compressed":
							p["storage"] = "int8 traversal + fp16 re-rank (mapped)"
						case " int8":
							p["storage"] = "int8 traversal + fp32 re-rank (in memory)"
						}
						hk := k.h
						c, err := searchCaseExtra(env, hk, vs, config, p, b, t, note, func() { hk.SetEfSearch(ef) }, k.extra)
						if err != nil {
							return nil, nil, err
						}
						cases = append(cases, c)
					}
				}
			}
		}
	}
	return cases, nil, nil
}

// hnswKind is one way of serving a built graph: float32, or compressed.
type hnswKind struct {
	h      *ann.HNSW
	suffix string
	extra  map[string]float64
}

// hnswExtra is a graph's memory per vector (HNSW.MemoryBytes: vectors,
// codes and graph held in memory; a compressed graph's mapped fp16 rows are
// not counted) and its build time.
func hnswExtra(h *ann.HNSW, build time.Duration) map[string]float64 {
	v, c, g := h.MemoryBytes()
	n := float64(max(1, h.Len()))
	return map[string]float64{"bytes/vector": float64(v+c+g) / n, "graph bytes/vector": float64(g) / n, "build_s": build.Seconds()}
}

// graphCopy saves h to Work/hnsw and loads it back: the same graph and
// vectors, to be served another way.
func graphCopy(env *bench.Env, vs *VectorSet, h *ann.HNSW) (*ann.HNSW, string, error) {
	dir, err := workDir(env, "hnsw")
	if err != nil {
		return nil, "", err
	}
	c := h.Config()
	graph := filepath.Join(dir, fmt.Sprintf("%s-M%d-efc%d.hnsw", vs.Name, c.M, c.EfConstruction))
	if err := h.Save(graph, false); err != nil {
		return nil, "", err
	}
	hc, err := ann.LoadHNSW(graph)
	os.Remove(graph)
	return hc, dir, err
}

// int8Copy is a copy of h that traverses on int8 codes and re-ranks on its
// float32 vectors (HNSW.TraverseInt8; rlsearch --hnsw-int8).
func int8Copy(env *bench.Env, vs *VectorSet, h *ann.HNSW) (*ann.HNSW, error) {
	hi, _, err := graphCopy(env, vs, h)
	if err != nil {
		return nil, err
	}
	return hi, hi.TraverseInt8()
}

// compressedCopy is a copy of h compressed over an fp16 rows file in
// Work/hnsw (written afresh per set).
func compressedCopy(env *bench.Env, vs *VectorSet, h *ann.HNSW) (*ann.HNSW, error) {
	hc, dir, err := graphCopy(env, vs, h)
	if err != nil {
		return nil, err
	}
	rows := filepath.Join(dir, vs.Name+".f16")
	os.Remove(rows) // the set's vectors may have changed (hnsw.n); written afresh
	if _, err := hc.Compress(rows); err != nil {
		return nil, err
	}
	fmt.Fprintf(env.Log, "%s: compressed copy of the graph, fp16 rows %s\n", vs.Name, rows)
	return hc, nil
}
