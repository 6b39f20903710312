package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/sdk"
)

// Programs measures batch execution of rollout programs (sdk.RunBatch) on
// the wiki_multihop BM25 index: batches of "programs.batch" programs
// (default 256) made of "programs.group" rollouts per question (default 8,
// a GRPO group), built by ProgramRequests; with coalescing and memo (the
// default), without coalescing, and without memo (every call on its own).
// programs/s; latency per batch.
func Programs() bench.Suite {
	return bench.Suite{Name: "programs", Doc: "rollout program batches (sdk.RunBatch) on the wiki BM25 index: programs/s with and without coalescing", Setup: setupPrograms}
}

// Mutate measures the RPL mutation verifier (sdk.Verifier.Search, default
// budget of 64 executions, V_ret over the gold passages) on the real
// multi-hop questions, starting from the sparse width-3 print-3 program of
// each question: mutations executed and checked per second (throughput),
// with the verified mutations found per second and questions per second in
// Extra; "mutate.batch" questions (default 16) per call spread over the
// call's threads; with the shared primitive cache and without (no_cache).
func Mutate() bench.Suite {
	return bench.Suite{Name: "mutate", Doc: "RPL mutation verifier (sdk.Verifier) on the multi-hop questions: mutations verified per second", Setup: setupMutate}
}

// ProgramRequests returns the program workload of the programs suite (and
// of a peer running the same programs): n programs, group consecutive ones
// per question (rollouts of one question), seeded: typed sparse programs
// (1–2 queries of the pool, width and print from the RPL ladders) and every
// fourth a hand-written Starlark loop fusing two sparse calls. Code is
// Starlark source as the policy writes it; Question the question.
func ProgramRequests(questions []string, n, group int, seed uint64) []sdk.Request {
	rng := rand.New(rand.NewPCG(seed, 7))
	reqs := make([]sdk.Request, n)
	for i := range reqs {
		q := questions[(i/group)%len(questions)]
		other := questions[rng.IntN(len(questions))]
		w := sdk.Widths[rng.IntN(len(sdk.Widths))]
		var src string
		switch {
		case i%4 == 3:
			src = fmt.Sprintf("docs = []\nfor q in [question, %q]:\n    docs.append(sparse(q, k=%d))\nbest = fuse(docs)\nprint(best[:3])\nprint(\"kept\", len(best))\n", other, w)
		default:
			p := sdk.Program{Queries: []string{q}, Mode: sdk.ModeSparse, Width: w, Print: min(w, 1+rng.IntN(5))}
			if rng.IntN(3) == 0 {
				p.Queries = append(p.Queries, other)
			}
			src = p.Source()
		}
		reqs[i] = sdk.Request{ID: fmt.Sprint(i), Code: src, Question: q}
	}
	return reqs
}

// wikiRuntime opens the wiki BM25 index and an sdk runtime over it.
func wikiRuntime(ctx context.Context, env *bench.Env) (*index.Index, *sdk.Runtime, []bench.Question, error) {
	corpus, err := dataFile(env, wikiCorpus)
	if err != nil {
		return nil, nil, nil, err
	}
	qpath, err := dataFile(env, wikiQuestions)
	if err != nil {
		return nil, nil, nil, err
	}
	qs, err := bench.LoadQuestions(qpath)
	if err != nil {
		return nil, nil, nil, err
	}
	ix, err := openIndex(ctx, env, "index-wiki18k", corpus)
	if err != nil {
		return nil, nil, nil, err
	}
	rt, err := sdk.New(sdk.Config{Retrievers: ix.Retrievers(), Docs: ix})
	if err != nil {
		ix.Close()
		return nil, nil, nil, err
	}
	return ix, rt, qs, nil
}

func setupPrograms(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	ix, rt, qs, err := wikiRuntime(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	bs, err := ints("programs.batch", env.Get("programs", "batch", "256"))
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	gs, err := ints("programs.group", env.Get("programs", "group", "8"))
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	batch, group := bs[0], gs[0]
	questions := make([]string, len(qs))
	for i, q := range qs {
		questions[i] = q.Question
	}
	// Enough batches that repetitions do not replay the same memo-cold set.
	reqs := ProgramRequests(questions, batch*16, group, env.Seed)
	if err := writeRequests(env, reqs, batch, group); err != nil {
		ix.Close()
		return nil, nil, err
	}
	var cases []bench.Case
	for _, m := range []struct {
		name string
		opt  sdk.BatchOptions
	}{{"coalesce+memo", sdk.BatchOptions{}}, {"memo", sdk.BatchOptions{NoCoalesce: true}}, {"none", sdk.BatchOptions{NoMemo: true}}} {
		p := map[string]any{"index": "wiki18k-bm25", "batch": batch, "group": group, "sharing": m.name}
		note := fmt.Sprintf("%d programs per RunBatch, %d rollouts per question (real questions), sparse route; sharing: coalesce+memo = retrieval calls of the batch merged and memoised, memo = memoised only, none = every call alone", batch, group)
		var failed atomic.Int64
		cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "programs/s", Note: note,
			Run: func(ctx context.Context) (bench.Rep, error) {
				failed.Store(0)
				rep, err := bench.Measure(ctx, env.Budget(2), func(ctx context.Context, i int) (int, error) {
					lo := (i * batch) % len(reqs)
					res := rt.RunBatch(ctx, reqs[lo:lo+batch], m.opt)
					for _, r := range res {
						if r.Code != sdk.CodeOK {
							failed.Add(1)
						}
					}
					return len(res), nil
				})
				rep.Errors = int(failed.Load())
				return rep, err
			}})
	}
	return cases, func() { ix.Close() }, nil
}

// writeRequests saves the program workload as JSONL (one sdk.Request per
// line) in env.Work/programs/requests-B-G-seedS.jsonl for peers.
func writeRequests(env *bench.Env, reqs []sdk.Request, batch, group int) error {
	dir, err := workDir(env, "programs")
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range reqs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return bench.WriteFileAtomic(filepath.Join(dir, ProgramsFile(batch, group, env.Seed)), buf.Bytes())
}

// ProgramsFile is the name of the programs suite's workload file in
// Work/programs (JSONL of sdk.Request), for peers.
func ProgramsFile(batch, group int, seed uint64) string {
	return fmt.Sprintf("requests-%d-%d-seed%d.jsonl", batch, group, seed)
}

func setupMutate(ctx context.Context, env *bench.Env) ([]bench.Case, func(), error) {
	ix, rt, qs, err := wikiRuntime(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	var gold []bench.Question
	for _, q := range qs {
		if len(q.GoldIDs) > 0 {
			gold = append(gold, q)
		}
	}
	if len(gold) == 0 {
		ix.Close()
		return nil, nil, fmt.Errorf("suites: mutate: no question with gold passages")
	}
	bs, err := ints("mutate.batch", env.Get("mutate", "batch", "16"))
	if err != nil {
		ix.Close()
		return nil, nil, err
	}
	batch := bs[0]
	modes := []bool{false, true}
	if env.Quick {
		modes = modes[:1]
	}
	var cases []bench.Case
	for _, noCache := range modes {
		v, err := sdk.NewVerifier(rt, sdk.MutateConfig{NoCache: noCache})
		if err != nil {
			ix.Close()
			return nil, nil, err
		}
		for _, t := range env.Threads {
			p := map[string]any{"index": "wiki18k-bm25", "budget": 64, "batch": batch, "threads": t, "cache": !noCache}
			note := fmt.Sprintf("%d questions with gold passages; start program sparse(question, k=3) printing 3; budget 64 executions; extra: verified mutations found per second", len(gold))
			cases = append(cases, bench.Case{Config: bench.Key(p), Params: p, Unit: "mutations/s", Note: note, Threads: t,
				Run: func(ctx context.Context) (bench.Rep, error) {
					var found, questions atomic.Int64
					rep, err := bench.Measure(ctx, bench.Budget{MinTime: env.MinTime, MinCalls: 1}, func(ctx context.Context, i int) (int, error) {
						var execs atomic.Int64
						var firstErr error
						var mu sync.Mutex
						var wg sync.WaitGroup
						next := atomic.Int64{}
						for w := 0; w < t; w++ {
							wg.Add(1)
							go func() {
								defer wg.Done()
								for {
									j := int(next.Add(1)) - 1
									if j >= batch {
										return
									}
									q := gold[(i*batch+j)%len(gold)]
									prog := sdk.Program{Queries: []string{q.Question}, Mode: sdk.ModeSparse, Width: 3, Print: 3}
									res, err := v.Search(ctx, prog, nil, sdk.Gold{IDs: q.GoldIDs}, nil)
									if err != nil {
										mu.Lock()
										if firstErr == nil {
											firstErr = fmt.Errorf("question %s: %w", q.ID, err)
										}
										mu.Unlock()
										return
									}
									execs.Add(int64(res.Executions))
									found.Add(int64(len(res.Verified)))
									questions.Add(1)
								}
							}()
						}
						wg.Wait()
						return int(execs.Load()), firstErr
					})
					if s := rep.Elapsed.Seconds(); s > 0 {
						rep.Extra = map[string]float64{"verified_found/s": float64(found.Load()) / s, "questions/s": float64(questions.Load()) / s}
					}
					return rep, err
				}})
		}
	}
	return cases, func() { ix.Close() }, nil
}
