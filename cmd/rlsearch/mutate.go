package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/sdk"
)

// addMutateEndpoints mounts POST /v1/programs/mutate (package sdk) over the
// served index, with the default verifier configuration (64 executions,
// all gold); the rerank ladder is in the mutation space only when serve has
// a --reranker.
func addMutateEndpoints(m map[string]server.Endpoint, rt *sdk.Runtime) error {
	v, err := sdk.NewVerifier(rt, sdk.MutateConfig{})
	if err != nil {
		return err
	}
	m["/v1/programs/mutate"] = server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: sdk.DefaultMaxBodyBytes})
	return nil
}

// runMutate: trajectories JSONL in, proposals JSONL out (default);
// --records: record requests in, D_mut records out; --eval: the
// single-query width-3 BM25 experiment over a question set, a JSON summary
// out.
func runMutate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	var idx indexFlags
	idx.bind(fs)
	var rr rerankFlags
	rr.bind(fs)
	in := fs.String("in", "", "input JSONL (default stdin): trajectories, or record requests with --records")
	out := fs.String("out", "", "output JSONL, written atomically (default stdout)")
	records := fs.Bool("records", false, "build D_mut records: each line {trajectory, program, continuation}")
	eval := fs.Bool("eval", false, "measure: for every question, a single-query width-3 BM25 program of the question text, searched for a verified mutation")
	questions := fs.String("questions", defaultQuestions(), "question set for --eval")
	datasets := fs.String("datasets", "hotpotqa,musique", "datasets of the question set used by --eval (comma-separated; empty = all)")
	executions := fs.Int("executions", 0, "execution budget per program (0 = 64, at most 256)")
	minGold := fs.Int("min-gold", 0, "V_ret needs at least this many gold documents printed (0 = all)")
	maxVerified := fs.Int("max-verified", 0, "verified mutations to find per program (0 = 1)")
	maxPrint := fs.Int("max-print", 0, "documents a mutation prints: min(kept, this) (0 = 20, the paper's print budget)")
	poolEarlier := fs.Bool("pool-earlier-turns", false, "add the queries of earlier retrieval turns to the query pool")
	noCache := fs.Bool("no-cache", false, "no shared primitive cache: every execution retrieves on its own (the oracle)")
	workers := fs.Int("workers", 4, "programs searched at once")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if len(fs.Args()) > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if *records && *eval {
		return usageErr("--records and --eval are exclusive")
	}
	if *workers < 1 {
		return usageErr("--workers %d must be ≥ 1", *workers)
	}
	cfg := sdk.MutateConfig{Executions: *executions, MinGold: *minGold, MaxVerified: *maxVerified,
		PoolFromEarlierTurns: *poolEarlier, NoCache: *noCache, Space: sdk.Space{MaxPrint: *maxPrint}}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	ix, closeIx, err := idx.open(ctx)
	if err != nil {
		return err
	}
	defer closeIx()
	deps, _, closeDeps, err := openDeps(ctx, &rr, idx.model.ortLib, "")
	if err != nil {
		return err
	}
	defer closeDeps()
	rcfg := runtimeConfig(ix, deps)
	rt, err := sdk.New(rcfg)
	if err != nil {
		return err
	}
	v, err := sdk.NewVerifier(rt, cfg)
	if err != nil {
		return err
	}
	if *eval {
		var ds []string
		if *datasets != "" {
			ds = strings.Split(*datasets, ",")
		}
		return mutateEval(ctx, v, *questions, ds, *workers, !*quiet, stdout, stderr)
	}
	src := io.Reader(os.Stdin)
	if *in != "" {
		f, err := os.Open(*in)
		if err != nil {
			return err
		}
		defer f.Close()
		src = f
	}
	lines, err := readJSONLines(src)
	if err != nil {
		return err
	}
	prog := newLineProgress(stderr, len(lines), "mutate", !*quiet)
	var results []any
	start := time.Now()
	if *records {
		results = make([]any, len(lines))
		for i, b := range lines {
			var req sdk.RecordRequest
			if err := decodeStrict(b.data, &req); err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.line, err)
			}
			rec, err := v.BuildRecord(ctx, req, nil)
			res := sdk.RecordResult{}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				res.Error = err.Error()
			} else {
				res.Record = &rec
			}
			results[i] = res
			prog.add()
		}
	} else {
		ts := make([]sdk.Trajectory, len(lines))
		for i, b := range lines {
			if err := decodeStrict(b.data, &ts[i]); err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.line, err)
			}
			if err := ts[i].Validate(); err != nil {
				return fmt.Errorf("%w: line %d: %v", rlsearch.ErrBadInput, b.line, err)
			}
		}
		for _, p := range v.ProposeBatch(ctx, ts, *workers, prog.add) {
			results = append(results, p)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	prog.finish()
	if err := writeJSONLAtomic(*out, stdout, results); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "mutate: %d lines in %.2fs\n", len(lines), time.Since(start).Seconds())
	return nil
}

type jsonLine struct {
	line int
	data []byte
}

func readJSONLines(r io.Reader) ([]jsonLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), sdk.DefaultMaxBodyBytes)
	var out []jsonLine
	for line := 1; sc.Scan(); line++ {
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			out = append(out, jsonLine{line, slices.Clone(b)})
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line is over %d bytes", rlsearch.ErrBadInput, sdk.DefaultMaxBodyBytes)
		}
		return nil, err
	}
	return out, nil
}

func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON object")
	}
	return nil
}

// writeJSONLAtomic writes one JSON value per line to path (temp file +
// rename) or, when path is empty, to w.
func writeJSONLAtomic(path string, w io.Writer, vals []any) error {
	var tmp *os.File
	if path != "" {
		var err error
		if tmp, err = os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*"); err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		w = tmp
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, v := range vals {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if tmp == nil {
		return nil
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// lineProgress reports progress on stderr: a bar on a terminal, else a
// plain line every 10 s.
type lineProgress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int
	name  string
	done  atomic.Int64
	mu    sync.Mutex
	last  time.Time
	start time.Time
}

func newLineProgress(w io.Writer, total int, name string, on bool) *lineProgress {
	p := &lineProgress{total: total, name: name, start: time.Now(), last: time.Now()}
	if !on {
		return p
	}
	p.w = w
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(name),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond))
	}
	return p
}

func (p *lineProgress) add() {
	n := p.done.Add(1)
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Add(1)
		return
	}
	if time.Since(p.last) >= 10*time.Second {
		p.last = time.Now()
		rate := float64(n) / max(time.Since(p.start).Seconds(), 1e-9)
		fmt.Fprintf(p.w, "%s: %d/%d (%.1f/s)\n", p.name, n, p.total, rate)
	}
}

func (p *lineProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}

// evalGroup aggregates the --eval outcome of a set of questions.
type evalGroup struct {
	Questions        int     `json:"questions"`
	Verified         int     `json:"verified"`          // a verified mutation within the budget
	FractionVerified float64 `json:"fraction_verified"` // Verified / Questions
	OriginalVerified int     `json:"original_verified"` // the width-3 program already prints all gold
	// VerifiedWhereOriginalFails: among questions whose original fails
	// V_ret, the fraction that gets a verified mutation.
	VerifiedWhereOriginalFails float64        `json:"fraction_verified_where_original_fails"`
	MeanExecutions             float64        `json:"mean_executions"`
	MeanSearches               float64        `json:"mean_searches"`
	FailedExecutions           int            `json:"failed_executions"`
	SpaceSize                  int            `json:"space_size"` // |U(p)| (the same for every question)
	Distances                  map[string]int `json:"distance_histogram"`
	Widths                     map[int]int    `json:"verified_width_histogram"`
}

// mutateEval runs the --eval experiment.
func mutateEval(ctx context.Context, v *sdk.Verifier, path string, datasets []string, workers int, progress bool, stdout, stderr io.Writer) error {
	qs, err := bench.LoadQuestions(path)
	if err != nil {
		return err
	}
	if len(datasets) > 0 {
		qs = slices.DeleteFunc(qs, func(q bench.Question) bool { return !slices.Contains(datasets, q.Dataset) })
	}
	if len(qs) == 0 {
		return usageErr("no questions of datasets %v in %s", datasets, path)
	}
	type outcome struct {
		res sdk.SearchResult
		err error
	}
	outs := make([]outcome, len(qs))
	prog := newLineProgress(stderr, len(qs), "mutate --eval", progress)
	start := time.Now()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := sdk.Program{Queries: []string{qs[i].Question}, Mode: sdk.ModeSparse, Width: 3, Print: 3}
				res, err := v.Search(ctx, p, nil, sdk.Gold{IDs: qs[i].GoldIDs}, nil)
				outs[i] = outcome{res, err}
				prog.add()
			}
		}()
	}
	for i := range qs {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	prog.finish()
	if err := ctx.Err(); err != nil {
		return err
	}
	el := time.Since(start)
	groups := map[string]*evalGroup{}
	get := func(k string) *evalGroup {
		if groups[k] == nil {
			groups[k] = &evalGroup{Distances: map[string]int{}, Widths: map[int]int{}}
		}
		return groups[k]
	}
	executions := 0
	for i, o := range outs {
		if o.err != nil {
			return fmt.Errorf("question %s: %w", qs[i].ID, o.err)
		}
		executions += o.res.Executions
		for _, g := range []*evalGroup{get(qs[i].Dataset), get("all")} {
			g.Questions++
			g.MeanExecutions += float64(o.res.Executions)
			g.MeanSearches += float64(o.res.Searches)
			g.FailedExecutions += o.res.Failed
			g.SpaceSize = o.res.SpaceSize
			if o.res.Original != nil && o.res.Original.Verified {
				g.OriginalVerified++
			}
			if len(o.res.Verified) > 0 {
				g.Verified++
				m := o.res.Verified[0]
				g.Distances[m.Distance.String()]++
				g.Widths[m.Program.Width]++
			}
		}
	}
	for _, g := range groups {
		n := float64(g.Questions)
		g.FractionVerified = float64(g.Verified) / n
		g.MeanExecutions /= n
		g.MeanSearches /= n
		// A question whose original passes V_ret may still get a verified
		// mutation; count the verified among those whose original fails.
		g.VerifiedWhereOriginalFails = 0
	}
	for i, o := range outs {
		if o.res.Original != nil && !o.res.Original.Verified && len(o.res.Verified) > 0 {
			for _, k := range []string{qs[i].Dataset, "all"} {
				groups[k].VerifiedWhereOriginalFails++
			}
		}
	}
	for _, g := range groups {
		if f := g.Questions - g.OriginalVerified; f > 0 {
			g.VerifiedWhereOriginalFails /= float64(f)
		}
	}
	summary := map[string]any{
		"questions_file": path, "executions_budget": v.Config().Executions, "min_gold": v.Config().MinGold,
		"space": v.Space(), "cache": !v.Config().NoCache, "groups": groups,
		"seconds": el.Seconds(), "executions_per_second": float64(executions) / max(el.Seconds(), 1e-9),
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(summary)
}
