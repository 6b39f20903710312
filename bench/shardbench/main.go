// Command shardbench measures sharded serving against one index on one
// machine (`make bench-shards`): a generated wiki-shaped corpus
// (`rlsearch-bench gencorpus`, 1M passages by default) built as one index and as
// two shards, then /retrieve (BM25, top-10, one wiki_multihop question per
// request, closed loop) at concurrency 32 and 1 against
//
//	one index × 2 cores       serve --index one, GOMAXPROCS=2
//	one index, bm25-parallel  the same with --bm25-parallel 2 (two row ranges per query, in-process)
//	2 shards × 1 core         two shard servers pinned to one core each (taskset, GOMAXPROCS=1) + a router
//	2 shards × 2 replicas     four shard servers (GOMAXPROCS=1, unpinned) + a router, hedging auto / off
//
// in interleaved rounds (every server with its result cache off:
// --cache-bytes off), and prints a Markdown table (requests/s, p50, p99,
// max, failures; ratio to one index) with the machine and its load before
// and after; -json writes the rows. The router and the load generator run
// on the same two cores as the servers.
//
//	go run ./bench/shardbench -n 1000000 -dir out/bench-shards -duration 15s -rounds 2
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/loadgen"
)

type options struct {
	bin, benchBin, dir, corpus, questions, seed string
	n, rounds, k                                int
	dur                                         time.Duration
	conc                                        []int
	configs                                     string
}

// row is one measurement.
type row struct {
	Config      string  `json:"config"`
	Concurrency int     `json:"concurrency"`
	Round       int     `json:"round"`
	RPS         float64 `json:"requests_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
}

func main() {
	var o options
	data := filepath.Join("..", "shared", "data")
	if d := os.Getenv("RLSEARCH_DATA"); d != "" {
		data = d
	}
	flag.StringVar(&o.bin, "rlsearch", "bin/rlsearch", "rlsearch binary (index, serve)")
	flag.StringVar(&o.benchBin, "rlsearch-bench", "bin/rlsearch-bench", "rlsearch-bench binary (gencorpus)")
	flag.StringVar(&o.dir, "dir", "out/bench-shards", "work directory: the corpus and the indexes (reused when present)")
	flag.StringVar(&o.corpus, "corpus", "", "corpus to use instead of generating one")
	flag.IntVar(&o.n, "n", 1_000_000, "passages to generate")
	flag.StringVar(&o.seed, "seed-corpus", filepath.Join(data, "wiki_multihop", "corpus.jsonl"), "seed corpus of gencorpus")
	flag.StringVar(&o.questions, "questions", filepath.Join(data, "wiki_multihop", "questions.jsonl"), "the queries")
	flag.IntVar(&o.rounds, "rounds", 2, "interleaved rounds")
	flag.IntVar(&o.k, "k", 10, "topk")
	flag.DurationVar(&o.dur, "duration", 15*time.Second, "time per measurement")
	conc := flag.String("c", "32,1", "concurrencies")
	flag.StringVar(&o.configs, "configs", "one,one-parallel,shards,replicas-hedge,replicas-nohedge", "configurations")
	jsonOut := flag.String("json", "", "write the rows here")
	flag.Parse()
	for _, s := range strings.Split(*conc, ",") {
		var c int
		if _, err := fmt.Sscan(s, &c); err != nil || c < 1 {
			fmt.Fprintf(os.Stderr, "shardbench: bad -c %q\n", *conc)
			os.Exit(2)
		}
		o.conc = append(o.conc, c)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, *jsonOut); err != nil {
		fmt.Fprintln(os.Stderr, "shardbench:", err)
		os.Exit(1)
	}
}

// sh runs a command, its output to stderr.
func sh(ctx context.Context, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func run(ctx context.Context, o options, jsonOut string) error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	corpus := o.corpus
	if corpus == "" {
		corpus = filepath.Join(o.dir, fmt.Sprintf("corpus-%d.jsonl.zst", o.n))
		if !exists(corpus) {
			if err := sh(ctx, nil, o.benchBin, "gencorpus", "--n", fmt.Sprint(o.n), "--seed-corpus", o.seed, "--out", corpus, "--quiet"); err != nil {
				return fmt.Errorf("gencorpus: %w", err)
			}
		}
	}
	one, shards := filepath.Join(o.dir, "one"), filepath.Join(o.dir, "shards2")
	if !exists(filepath.Join(one, "meta.json")) {
		if err := sh(ctx, []string{"MODEL="}, o.bin, "index", "--corpus", corpus, "--out", one, "--quiet"); err != nil {
			return err
		}
	}
	if !exists(filepath.Join(shards, "manifest.json")) {
		if err := sh(ctx, []string{"MODEL="}, o.bin, "index", "--corpus", corpus, "--out", shards, "--shards", "2", "--quiet"); err != nil {
			return err
		}
	}
	qs, err := bench.LoadQuestions(o.questions)
	if err != nil {
		return err
	}
	texts := bench.Texts(qs)
	env := bench.CaptureEnv()
	var rows []row
	cfgs := strings.Split(o.configs, ",")
	for round := 1; round <= o.rounds; round++ {
		for _, cfg := range cfgs {
			url, stopAll, err := start(ctx, o, cfg, one, shards)
			if err != nil {
				return fmt.Errorf("%s: %w", cfg, err)
			}
			for _, c := range o.conc {
				// A short warm-up, then the measurement.
				measure(ctx, url, texts, o.k, c, 2*time.Second)
				res := measure(ctx, url, texts, o.k, c, o.dur)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				r := row{Config: cfg, Concurrency: c, Round: round, RPS: res.Throughput, P50ms: ms(res.P50), P99ms: ms(res.P99), MaxMs: ms(res.Max), Requests: res.Sent, Errors: res.Errors}
				rows = append(rows, r)
				fmt.Fprintf(os.Stderr, "shardbench: round %d %-17s c=%-2d %7.1f requests/s  p50 %6.1f ms  p99 %7.1f ms  errors %d\n", round, cfg, c, r.RPS, r.P50ms, r.P99ms, r.Errors)
			}
			stopAll()
		}
	}
	after := bench.CaptureEnv().LoadBefore
	report(os.Stdout, env, after, o, corpus, rows)
	if jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"environment": env, "load_after": after, "rows": rows}, "", "  ")
		return bench.WriteFileAtomic(jsonOut, append(b, '\n'))
	}
	return nil
}

func measure(ctx context.Context, url string, texts []string, k, c int, d time.Duration) loadgen.Result {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(uint64(c), 24))
	res, _ := loadgen.RunClosed(ctx, loadgen.ClosedConfig{URL: url + "/retrieve", Concurrency: c, Duration: d, Timeout: 30 * time.Second,
		Body: func(int) []byte {
			mu.Lock()
			q := texts[r.IntN(len(texts))]
			mu.Unlock()
			b, _ := json.Marshal(map[string]any{"queries": []string{q}, "topk": k, "return_scores": true})
			return b
		}})
	return res
}

// server is one started process.
type server struct {
	cmd  *exec.Cmd
	addr string
}

// serve starts `rlsearch serve args...` with GOMAXPROCS=procs, pinned to
// cpu (-1: not pinned), and waits until it listens.
func serve(ctx context.Context, o options, procs, cpu int, args ...string) (*server, error) {
	// The result cache off everywhere: the queries repeat the 763
	// questions, and a cache would measure itself instead of retrieval.
	name, argv := o.bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--cache-bytes", "off"}, args...)
	if cpu >= 0 {
		name, argv = "taskset", append([]string{"-c", fmt.Sprint(cpu), o.bin}, argv...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", procs), "MODEL=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "listening on http://") {
			go func() {
				for sc.Scan() {
				}
			}()
			return &server{cmd: cmd, addr: strings.TrimPrefix(l, "listening on http://")}, nil
		}
	}
	cmd.Wait()
	return nil, fmt.Errorf("rlsearch %v exited before listening", argv)
}

// start starts configuration cfg and returns its URL and a stop function.
func start(ctx context.Context, o options, cfg, one, shards string) (string, func(), error) {
	var procs []*server
	stopAll := func() {
		for _, p := range procs {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	}
	add := func(p *server, err error) error {
		if err == nil {
			procs = append(procs, p)
		}
		return err
	}
	shard := func(i int) string { return filepath.Join(shards, fmt.Sprintf("shard-%d-of-2", i)) }
	var err error
	switch cfg {
	case "one":
		err = add(serve(ctx, o, 2, -1, "--index", one))
	case "one-parallel":
		err = add(serve(ctx, o, 2, -1, "--index", one, "--bm25-parallel", "2"))
	case "shards", "replicas-hedge", "replicas-nohedge":
		var urls []string
		reps := 1
		if cfg != "shards" {
			reps = 2
		}
		for i := range 2 {
			for range reps {
				cpu := -1
				if cfg == "shards" {
					cpu = i
				}
				if err = add(serve(ctx, o, 1, cpu, "--index", shard(i))); err != nil {
					break
				}
				urls = append(urls, "http://"+procs[len(procs)-1].addr)
			}
		}
		if err == nil {
			hedge := "auto"
			if cfg == "replicas-nohedge" {
				hedge = "off"
			}
			err = add(serve(ctx, o, 2, -1, "--shards", strings.Join(urls, ","), "--hedge-after", hedge))
		}
	default:
		err = fmt.Errorf("unknown configuration (want one, one-parallel, shards, replicas-hedge, replicas-nohedge)")
	}
	if err != nil {
		stopAll()
		return "", nil, err
	}
	return "http://" + procs[len(procs)-1].addr, stopAll, nil
}

// report prints the median of the rounds per configuration and
// concurrency, with the ratio of requests/s to "one".
func report(w *os.File, env bench.Environment, after [3]float64, o options, corpus string, rows []row) {
	fmt.Fprintf(w, "%s, %d cores, %.1f GiB, load average %.2f/%.2f/%.2f before, %.2f/%.2f/%.2f after; corpus %s; %d rounds of %v per row (medians); topk %d, one question per request\n\n",
		env.CPU, env.Cores, float64(env.MemoryBytes)/(1<<30), env.LoadBefore[0], env.LoadBefore[1], env.LoadBefore[2], after[0], after[1], after[2], filepath.Base(corpus), o.rounds, o.dur, o.k)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "configuration\tc\trequests/s\t/ one index\tp50 ms\tp99 ms\tmax ms\tfailed")
	base := map[int]float64{}
	type key struct {
		cfg string
		c   int
	}
	med := map[key]row{}
	var order []key
	for _, r := range rows {
		k := key{r.Config, r.Concurrency}
		if _, ok := med[k]; !ok {
			order = append(order, k)
		}
		var all []row
		for _, x := range rows {
			if x.Config == r.Config && x.Concurrency == r.Concurrency {
				all = append(all, x)
			}
		}
		m := func(f func(row) float64) float64 {
			v := make([]float64, len(all))
			for i, x := range all {
				v[i] = f(x)
			}
			slices.Sort(v)
			if n := len(v); n%2 == 0 {
				return (v[n/2-1] + v[n/2]) / 2
			}
			return v[len(v)/2]
		}
		errs := 0
		for _, x := range all {
			errs += x.Errors
		}
		med[k] = row{Config: r.Config, Concurrency: r.Concurrency, RPS: m(func(x row) float64 { return x.RPS }), P50ms: m(func(x row) float64 { return x.P50ms }),
			P99ms: m(func(x row) float64 { return x.P99ms }), MaxMs: m(func(x row) float64 { return x.MaxMs }), Errors: errs}
	}
	for _, k := range order {
		if k.cfg == "one" {
			base[k.c] = med[k].RPS
		}
	}
	for _, k := range order {
		r := med[k]
		ratio := "-"
		if b := base[k.c]; b > 0 {
			ratio = fmt.Sprintf("%.2f×", r.RPS/b)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.1f\t%.1f\t%.1f\t%d\n", r.Config, r.Concurrency, r.RPS, ratio, r.P50ms, r.P99ms, r.MaxMs, r.Errors)
	}
	tw.Flush()
}
