package suites

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/reward"
)

// Hybrid measures ProRetrieval hybrid programs (SQL WHERE over SQLite plus
// BM25 text retrieval entries) on the amazon_toys collection (10,000 real
// products, the shipped schema): "hybrid.n" generated benchmark instances
// (hybrid.Generate, default 256, seed = the run's), executed one per call on
// 1 thread and in batches of 64 (Collection.ExecuteBatch) on each thread
// count. programs/s.
func Hybrid() bench.Suite {
	return bench.Suite{Name: "hybrid", Doc: "ProRetrieval hybrid programs (SQL + retrieval) on amazon_toys: programs/s", Setup: setupHybrid}
}

// Rewards measures reward.Scorer.ScoreBatch for every reward kind (qa, rpl,
// search-p1, proretrieval with the execution outcome given) on rollouts
// built from the real multi-hop questions (half answering a gold answer,
// half a wrong one), "rewards.batch" rollouts per call (default 256).
// scores/s.
func Rewards() bench.Suite {
	return bench.Suite{Name: "rewards", Doc: "reward scoring (reward.Scorer) per kind: scores/s", Setup: setupRewards}
}

// GPU measures flat search on the GPU (ann.NewGPU, cuBLAS + this project's
// top-k kernels) over the bge-base vectors at batch 1, 64 and 512 when a
// device is present; otherwise the suite is skipped ("no GPU").
func GPU() bench.Suite {
	return bench.Suite{Name: "gpu", Doc: "GPU flat search (ann.GPUFlat) when a device is present", Setup: setupGPU}
}

func setupHybrid(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	data, err := dataFile(env, "amazon_toys/products.jsonl")
	if err != nil {
		return nil, nil, err
	}
	schema, err := hybrid.BuiltinSchema("amazon_toys")
	if err != nil {
		return nil, nil, err
	}
	root, err := workDir(env, "")
	if err != nil {
		return nil, nil, err
	}
	dir := filepath.Join(root, "hybrid-amazon_toys")
	st, err := os.Stat(data)
	if err != nil {
		return nil, nil, err
	}
	stamp := fmt.Sprintf("%s %d %d\n", data, st.Size(), st.ModTime().UnixNano())
	stampPath := dir + ".source"
	if old, err := os.ReadFile(stampPath); err != nil || string(old) != stamp {
		fmt.Fprintf(env.Log, "building the amazon_toys hybrid collection in %s\n", dir)
		if _, err := hybrid.Build(ctx, hybrid.BuildConfig{Schema: schema, Data: data, Dir: dir}); err != nil {
			return nil, nil, err
		}
		if err := bench.WriteFileAtomic(stampPath, []byte(stamp)); err != nil {
			return nil, nil, err
		}
	}
	col, err := hybrid.Open(ctx, dir, hybrid.OpenConfig{})
	if err != nil {
		return nil, nil, err
	}
	ns, err := ints("hybrid.n", env.Get("hybrid", "n", "256"))
	if err != nil {
		col.Close()
		return nil, nil, err
	}
	insts, _, err := hybrid.Generate(ctx, col, hybrid.GenConfig{N: ns[0], Seed: env.Seed})
	if err != nil {
		col.Close()
		return nil, nil, err
	}
	if len(insts) == 0 {
		col.Close()
		return nil, nil, fmt.Errorf("suites: hybrid: the generator made no instance")
	}
	progs := make([]hybrid.Program, len(insts))
	for i, in := range insts {
		progs[i] = in.Program
	}
	note := fmt.Sprintf("%d generated instances (levels L1/L2/L3) on %d amazon_toys products; SQLite + BM25 text fields, K=20", len(progs), col.Meta.Rows)
	var cases []bench.Case
	p := map[string]any{"collection": "amazon_toys", "threads": 1, "batch": 1}
	cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "programs/s", Note: note, Threads: 1,
		Run: func(ctx context.Context) (bench.Rep, error) {
			return bench.Measure(ctx, env.Budget(len(progs)/4), func(ctx context.Context, i int) (int, error) {
				_, err := col.Execute(ctx, progs[i%len(progs)])
				return 1, err
			})
		}})
	for _, t := range env.Threads {
		const b = 64
		p := map[string]any{"collection": "amazon_toys", "threads": t, "batch": b}
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "programs/s", Note: note, Threads: t,
			Run: func(ctx context.Context) (bench.Rep, error) {
				errs := 0
				rep, err := bench.Measure(ctx, env.Budget(2), func(ctx context.Context, i int) (int, error) {
					ps := make([]hybrid.Program, b)
					for j := range ps {
						ps[j] = progs[(i*b+j)%len(progs)]
					}
					for _, r := range col.ExecuteBatch(ctx, ps) {
						if r.Err != nil {
							errs++
						}
					}
					return b, nil
				})
				rep.Errors = errs
				return rep, err
			}})
	}
	return cases, func() { col.Close() }, nil
}

func setupRewards(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	qpath, err := dataFile(env, wikiQuestions)
	if err != nil {
		return nil, nil, err
	}
	qs, err := bench.LoadQuestions(qpath)
	if err != nil {
		return nil, nil, err
	}
	s, err := reward.New(reward.Config{})
	if err != nil {
		return nil, nil, err
	}
	bs, err := ints("rewards.batch", env.Get("rewards", "batch", "256"))
	if err != nil {
		return nil, nil, err
	}
	batch := bs[0]
	var cases []bench.Case
	for _, kind := range []reward.Kind{reward.KindQA, reward.KindRPL, reward.KindSearchP1, reward.KindProRetrieval} {
		rolls, err := rollouts(kind, qs, env.Seed)
		if err != nil {
			return nil, nil, err
		}
		p := map[string]any{"reward": string(kind), "batch": batch}
		note := fmt.Sprintf("%d rollouts built from the real multi-hop questions; lexical judge; proretrieval with the execution outcome given", len(rolls))
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "scores/s", Note: note,
			Run: func(ctx context.Context) (bench.Rep, error) {
				return bench.Measure(ctx, env.Budget(2), func(ctx context.Context, i int) (int, error) {
					b := make([]json.RawMessage, batch)
					for j := range b {
						b[j] = rolls[(i*batch+j)%len(rolls)]
					}
					res, err := s.ScoreBatch(ctx, kind, b)
					return len(res), err
				})
			}})
	}
	return cases, nil, nil
}

// rollouts builds one rollout of kind per question, seeded: the answer is a
// gold answer for even draws and a wrong one otherwise.
func rollouts(kind reward.Kind, qs []bench.Question, seed uint64) ([]json.RawMessage, error) {
	rng := rand.New(rand.NewPCG(seed, 11))
	var out []json.RawMessage
	for i, q := range qs {
		ans := "unknown"
		if len(q.GoldAnswers) > 0 && rng.IntN(2) == 0 {
			ans = q.GoldAnswers[0]
		}
		printed := []string{fmt.Sprintf("wiki-%06d", rng.IntN(18000))}
		if len(q.GoldIDs) > 0 && rng.IntN(2) == 0 {
			printed = append(printed, q.GoldIDs[0])
		}
		think := "<think>Steps:\n1) find " + q.Question + "\n2) answer</think>"
		var v any
		switch kind {
		case reward.KindQA:
			v = reward.QARollout{ID: q.ID, GoldenAnswers: q.GoldAnswers, Response: think + "<answer>" + ans + "</answer>"}
		case reward.KindRPL:
			v = reward.RPLRollout{ID: q.ID, GoldenAnswers: q.GoldAnswers, GoldIDs: q.GoldIDs,
				Response: think + "<code>docs = sparse(question, k=10)\nprint(docs[:3])</code><answer>" + ans + "</answer>",
				Turns:    []reward.RPLTurn{{Program: "docs = sparse(question, k=10)\nprint(docs[:3])", PrintedIDs: printed, Observation: strings.Repeat("evidence ", 40), RetrievalCalls: 1, Candidates: 10}}}
		case reward.KindSearchP1:
			v = reward.SearchP1Rollout{ID: q.ID, Question: q.Question, GoldenAnswers: q.GoldAnswers,
				Response: think + "<search>" + q.Question + "</search><information>" + strings.Repeat("evidence ", 40) + "</information><answer>" + ans + "</answer>"}
		case reward.KindProRetrieval:
			truth := []string{fmt.Sprint(rng.IntN(10000)), fmt.Sprint(rng.IntN(10000))}
			ranked := []string{fmt.Sprint(rng.IntN(10000)), truth[0], fmt.Sprint(rng.IntN(10000))}
			v = reward.ProRetrievalRollout{ID: fmt.Sprint(i), Collection: "amazon_toys",
				Response:    think + `<answer>{"sql": "WHERE price < 10 AND <text_1>", "retrieval_list": [{"type": "text", "field": "title", "query": "wooden puzzle"}]}</answer>`,
				GroundTruth: truth, Executed: true, Ranked: ranked}
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func setupGPU(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	vs, err := LoadVectorSet(ctx, env.Data, "bge-base", 0, 0)
	if err != nil {
		return nil, nil, err
	}
	f, err := ann.NewFlat(vs.Base, vs.Dim, ann.FP16)
	if err != nil {
		return nil, nil, err
	}
	g, err := ann.NewGPU(f, ann.GPUConfig{})
	if err != nil {
		return nil, nil, skipf("no GPU (%v)", err)
	}
	var cases []bench.Case
	for _, b := range []int{1, 64, 512} {
		p := map[string]any{"data": vs.Name, "n": vs.N, "dim": vs.Dim, "dtype": "fp16", "k": 10, "batch": b}
		c, err := searchCase(env, g, vs, bench.Key(p), p, b, 0, "bge-base on the GPU (fp16 resident shard)", nil)
		if err != nil {
			g.Close()
			return nil, nil, err
		}
		cases = append(cases, c)
	}
	return cases, func() { g.Close() }, nil
}
