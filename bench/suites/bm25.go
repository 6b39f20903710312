package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/index"
)

// wikiCorpus and wikiQuestions are the real workload of the bm25, programs
// and mutate suites (18,175 passages, 763 questions).
const (
	wikiCorpus    = "wiki_multihop/corpus.jsonl"
	wikiQuestions = "wiki_multihop/questions.jsonl"
)

// BM25 measures BM25 search (k = 10) over the wiki_multihop corpus, with
// the real questions as queries, and over a generated corpus of N passages
// when "bm25.gen=N" is set (bench/gencorpus, topical model seeded with the
// real corpus, RandSeed = the run's seed). Cases per corpus: one query per
// call on 1 thread (per-query latency), and SearchBatch of "bm25.batch"
// (default 64) queries on each thread count (latency per batch).
func BM25() bench.Suite {
	return bench.Suite{Name: "bm25", Doc: "BM25 top-10 search over wiki_multihop (18k) and optionally a generated corpus (bm25.gen=N)", Setup: setupBM25}
}

func setupBM25(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	corpus, err := dataFile(env, wikiCorpus)
	if err != nil {
		return nil, nil, err
	}
	qpath, err := dataFile(env, wikiQuestions)
	if err != nil {
		return nil, nil, err
	}
	qs, err := bench.LoadQuestions(qpath)
	if err != nil {
		return nil, nil, err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	batches, err := ints("bm25.batch", env.Get("bm25", "batch", "64"))
	if err != nil {
		return nil, nil, err
	}
	type src struct{ name, corpus string }
	srcs := []src{{"wiki18k", corpus}}
	if g := env.Get("bm25", "gen", ""); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 1 {
			return nil, nil, fmt.Errorf("%w: bm25.gen=%q: want a passage count", errConfig, g)
		}
		dir, err := workDir(env, "gencorpus")
		if err != nil {
			return nil, nil, err
		}
		path := filepath.Join(dir, fmt.Sprintf("gen-%d-seed%d.jsonl.zst", n, env.Seed))
		if _, err := os.Stat(path); err != nil {
			fmt.Fprintf(env.Log, "generating a %d-passage corpus into %s\n", n, path)
			if _, err := gencorpus.WriteFile(ctx, gencorpus.Config{Seed: corpus, N: n, RandSeed: int64(env.Seed)}, path, nil); err != nil {
				return nil, nil, err
			}
		}
		srcs = append(srcs, src{fmt.Sprintf("gen%d", n), path})
	}
	var cases []bench.Case
	var closers []func()
	cleanup := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, s := range srcs {
		ix, err := openIndex(ctx, env, "index-"+s.name, s.corpus)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		closers = append(closers, func() { ix.Close() })
		bm := ix.BM25
		base := map[string]any{"corpus": s.name, "n": bm.NumDocs(), "k": 10}
		note := fmt.Sprintf("%s: %d passages, %d real questions as queries (k1=0.9 b=0.4)", s.name, bm.NumDocs(), len(texts))
		p := with(base, map[string]any{"threads": 1, "batch": 1})
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "queries/s", Note: note, Threads: 1,
			Run: func(ctx context.Context) (bench.Rep, error) {
				return bench.Measure(ctx, env.Budget(len(texts)/4), func(_ context.Context, i int) (int, error) {
					_, err := bm.SearchErr(texts[i%len(texts)], 10)
					return 1, err
				})
			}})
		for _, t := range env.Threads {
			for _, b := range batches {
				if b == 1 {
					continue
				}
				p := with(base, map[string]any{"threads": t, "batch": b})
				cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "queries/s", Note: note, Threads: t,
					Run: func(ctx context.Context) (bench.Rep, error) {
						return bench.Measure(ctx, env.Budget(3), func(ctx context.Context, i int) (int, error) {
							_, err := bm.SearchBatch(ctx, cycle(texts, i*b, b), 10)
							return b, err
						})
					}})
			}
		}
	}
	return cases, cleanup, nil
}

// with returns a copy of base with extra added.
func with(base, extra map[string]any) map[string]any {
	m := make(map[string]any, len(base)+len(extra))
	for k, v := range base {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// cycle returns n texts starting at from, wrapping around.
func cycle(texts []string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = texts[(from+i)%len(texts)]
	}
	return out
}

// openIndex opens (building it first when missing or stale) the BM25-only
// index of corpus in env.Work/name. A stamp file records the corpus path,
// size and modification time the index was built from.
func openIndex(ctx context.Context, env *bench.Env, name, corpus string) (*index.Index, error) {
	root, err := workDir(env, "")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	st, err := os.Stat(corpus)
	if err != nil {
		return nil, err
	}
	stamp := fmt.Sprintf("%s %d %d\n", corpus, st.Size(), st.ModTime().UnixNano())
	stampPath := filepath.Join(root, name+".source")
	if old, err := os.ReadFile(stampPath); err != nil || string(old) != stamp {
		fmt.Fprintf(env.Log, "building the BM25 index of %s in %s\n", corpus, dir)
		if _, err := index.Build(ctx, index.BuildConfig{Corpus: corpus, Dir: dir, Force: true}); err != nil {
			return nil, err
		}
		if err := bench.WriteFileAtomic(stampPath, []byte(stamp)); err != nil {
			return nil, err
		}
	}
	return index.Open(ctx, dir, index.OpenConfig{})
}
