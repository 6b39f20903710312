package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/stubsdk"
	"github.com/rlsearch/rlsearch/sdk"
)

// ProgramsConfig is the Config key of a programs measurement over the stub
// SDK (ours: the Go runtime; the peer: CPython), nprog programs cycled by
// threads workers.
func ProgramsConfig(nprog, threads int) string {
	return fmt.Sprintf("stub-sdk typed+free programs=%d one-by-one threads=%d", nprog, threads)
}

// The stub SDK both runtimes run on (internal/stubsdk; its Python twin
// stub_sdk.py is written next to programs_peer.py, which imports it).
type (
	stubRetriever = stubsdk.Retriever
	stubCorpus    = stubsdk.Corpus
	stubReranker  = stubsdk.Reranker
)

// stubRuntime is the Go program runtime over the stub SDK, configured as
// `rlsearch serve` configures it (default budgets and heap accounting).
func stubRuntime() (*sdk.Runtime, error) {
	return sdk.New(sdk.Config{
		Retrievers: map[string]rlsearch.Retriever{rlsearch.RetrieverE5: stubRetriever{Route: rlsearch.RetrieverE5}, rlsearch.RetrieverBM25: stubRetriever{Route: rlsearch.RetrieverBM25}},
		Docs:       stubCorpus{}, Reranker: stubReranker{},
	})
}

// StubPrograms returns n rollout programs (fixed seed): typed programs of
// the mutation grammar (random queries from a pool, mode, width, rerank,
// print), every eighth a free-form one with a loop, a helper function, a
// comprehension and a sort.
func StubPrograms(n int) []string {
	pool := []string{
		"Who directed the 2018 film Robin Hood?", "Otto Bathurst", "capital of Germany",
		"Which band released the album Nevermind?", "highest-level corporate executive whistleblower",
		"Steven Soderbergh film", "When was the Eiffel Tower built?", "Old Man and the Sea author",
	}
	modes := []sdk.Mode{sdk.ModeDense, sdk.ModeSparse, sdk.ModeFuse}
	rng := rand.New(rand.NewPCG(15, 1))
	out := make([]string, 0, n)
	for i := 0; len(out) < n; i++ {
		if i%8 == 7 {
			out = append(out, fmt.Sprintf(`def best(q, k):
    docs = fuse([dense(q, k=k), sparse(q, k=k)])
    return [d for d in docs if d.score > 0][:k]

pool = []
for q in [%q, %q, question]:
    pool.extend(best(q, %d))
pool = dedup(sorted(pool, key=lambda d: d.score, reverse=True))
titles = {}
for d in pool:
    titles[d.title] = titles.get(d.title, 0) + 1
print(rerank(question, pool, k=3))
print("distinct titles:", len(titles))
`, pool[i%len(pool)], pool[(i+3)%len(pool)], sdk.Widths[i%len(sdk.Widths)]))
			continue
		}
		nq := 1 + rng.IntN(min(sdk.MaxQueries, len(pool)))
		qs := make([]string, nq)
		for j, k := range rng.Perm(len(pool))[:nq] {
			qs[j] = pool[k]
		}
		p := sdk.Program{Queries: qs, Mode: modes[rng.IntN(len(modes))], Width: sdk.Widths[rng.IntN(len(sdk.Widths))],
			Rerank: sdk.RerankWidths[rng.IntN(len(sdk.RerankWidths))], Print: 1 + rng.IntN(5)}
		if p.Validate() == nil {
			out = append(out, p.Source())
		}
	}
	return out
}

// pythonVersion is "cpython-3.11.2" for Python.
func pythonVersion() string {
	out, err := exec.Command(Python, "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		return "cpython"
	}
	return "cpython-" + strings.TrimSpace(string(out))
}

func runPrograms(ctx context.Context, o Options, progress io.Writer) ([]bench.Row, error) {
	nprog := 64
	progs := StubPrograms(nprog)
	rt, err := stubRuntime()
	if err != nil {
		return nil, err
	}
	for i, p := range progs {
		if r := rt.Run(ctx, sdk.Request{Code: p, Question: "stub question"}, nil); r.Code != sdk.CodeOK {
			return nil, fmt.Errorf("peers: stub program %d fails in the Go runtime: %s %s", i, r.Code, r.Error)
		}
	}
	pyName := pythonVersion()
	var rows []bench.Row
	for _, t := range o.Threads {
		params := map[string]any{"programs": nprog, "threads": t, "sdk": "stub"}
		ours := bench.Row{Suite: "programs", System: SystemOurs, Config: ProgramsConfig(nprog, t), Params: params,
			Unit: "programs/s", Note: "Go runtime (Starlark) over the stub SDK, as served"}
		peer := bench.Row{Suite: "programs", System: pyName, Config: ProgramsConfig(nprog, t), Params: params,
			Unit: "programs/s", Note: "CPython exec() over the same stub SDK (no sandbox), one process per thread"}
		for r := 0; r < o.Reps; r++ {
			fmt.Fprintf(progress, "peers: programs threads=%d rep %d/%d: rlsearch, %s\n", t, r+1, o.Reps, pyName)
			ours.Reps = append(ours.Reps, measureGoPrograms(ctx, rt, progs, t, o.Duration))
			rp, err := measurePyPrograms(ctx, o, progs, pyName, params, t, r, progress)
			if err != nil {
				return rows, err
			}
			peer.Reps = append(peer.Reps, rp)
		}
		rows = append(rows, ours, peer)
	}
	return rows, ctx.Err()
}

// measureGoPrograms runs progs cycled by threads goroutines (GOMAXPROCS =
// threads for the measurement) for d.
func measureGoPrograms(ctx context.Context, rt *sdk.Runtime, progs []string, threads int, d time.Duration) bench.Rep {
	prev := runtime.GOMAXPROCS(threads)
	defer runtime.GOMAXPROCS(prev)
	lats := make([][]float64, threads)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ; i += threads {
				t := time.Now()
				rt.Run(ctx, sdk.Request{Code: progs[i%len(progs)], Question: "stub question"}, nil)
				lats[w] = append(lats[w], float64(time.Since(t))/1e6)
				if time.Since(start) >= d || ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(lats...)
	return bench.RepFrom(int64(len(all)), time.Since(start), all)
}

// measurePyPrograms runs threads CPython processes at once, each cycling
// over progs for d, and merges them into one Rep (throughputs summed).
func measurePyPrograms(ctx context.Context, o Options, progs []string, system string, params map[string]any, threads, rep int, progress io.Writer) (bench.Rep, error) {
	errs := make([]error, threads)
	outs := make([]string, threads)
	var wg sync.WaitGroup
	for w := range threads {
		job := map[string]any{"programs": progs, "time_s": o.Duration.Seconds(), "system": system, "params": params,
			"out": filepath.Join(o.WorkDir, fmt.Sprintf("programs-%d-%d-%d.json", threads, rep, w))}
		outs[w] = job["out"].(string)
		b, _ := json.Marshal(job)
		jp := outs[w] + ".job"
		if err := os.WriteFile(jp, b, 0o644); err != nil {
			return bench.Rep{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = runPython(ctx, o, env("PYTHONPATH", ""), io.Discard, "programs_peer.py", jp)
		}()
	}
	wg.Wait()
	var merged bench.Rep
	var lats []float64
	for w := range threads {
		if errs[w] != nil {
			return merged, errs[w]
		}
		rows, err := readRows(outs[w])
		if err != nil {
			return merged, err
		}
		if len(rows) != 1 || len(rows[0].Reps) != 1 {
			return merged, fmt.Errorf("%w: programs_peer.py wrote %d rows", ErrPeer, len(rows))
		}
		r := rows[0].Reps[0]
		merged.Throughput += r.Throughput
		merged.Ops += r.Ops
		merged.Elapsed = max(merged.Elapsed, r.Elapsed)
		lats = append(lats, r.Latencies...)
		if w == 0 {
			merged.P50ms, merged.P95ms, merged.P99ms = r.P50ms, r.P95ms, r.P99ms
		} else {
			merged.P50ms, merged.P95ms, merged.P99ms = max(merged.P50ms, r.P50ms), max(merged.P95ms, r.P95ms), max(merged.P99ms, r.P99ms)
		}
	}
	merged.Latencies = bench.RepFrom(0, 0, lats).Latencies
	return merged, nil
}
