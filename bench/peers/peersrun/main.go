// Command peersrun runs the peers of one or more suites on their own (what
// `rlsearch-bench run` does with them in a full run) and prints their rows; the
// JSON array of bench.Row goes to -out.
//
//	go run ./bench/peers/peersrun -suite serve,programs -quick -out out/peers.json
//	go run ./bench/peers/peersrun -suite hnsw -threads 1,2 -builds debian,avx2
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/peers"
)

func main() {
	suites := flag.String("suite", "serve", "comma-separated suites: "+strings.Join(peers.Suites, ","))
	quick := flag.Bool("quick", false, "short runs, one repetition")
	threads := flag.String("threads", "", "thread counts, e.g. 1,2 (default 1 and all cores)")
	batches := flag.String("batches", "", "flat/hnsw batch sizes (default 1,64)")
	efs := flag.String("efs", "", "hnsw efSearch values (default 16,64,256; 64 with -quick)")
	builds := flag.String("builds", "", "faiss builds: debian,avx2 (default both when built)")
	reps := flag.Int("reps", 0, "repetitions (default 3, 1 with -quick)")
	dur := flag.Duration("duration", 0, "time per measurement (default 2s, 0.5s with -quick)")
	step := flag.Duration("step", 0, "serve: rate-search step length (default 2s, 1s with -quick)")
	bin := flag.String("rlsearch", "", "serve: rlsearch binary (default bin/rlsearch)")
	routes := flag.String("routes", "", "serve: routes bm25,e5 (default both; e5 skipped without model, ONNX Runtime or faiss)")
	model := flag.String("model", "", "serve: E5 model directory of the dense route (default .cache/models/tiny, make testmodel)")
	vectors := flag.String("vectors", "", "serve: import the passage vectors of the dense route from this file (index --vectors) instead of encoding the corpus")
	corpus := flag.String("corpus", "", "serve: corpus JSONL (default wiki_multihop/corpus.jsonl)")
	out := flag.String("out", "", "write the rows as a JSON array here")
	flag.Parse()
	o := peers.Options{Quick: *quick, Reps: *reps, Duration: *dur, Rlsearch: *bin, Model: *model, DenseVectors: *vectors, Corpus: *corpus}
	o.Serve.Step = *step
	if *routes != "" {
		o.Serve.Routes = strings.Split(*routes, ",")
	}
	var err error
	if o.Threads, err = ints(*threads); err == nil {
		if o.Batches, err = ints(*batches); err == nil {
			o.EFSearch, err = ints(*efs)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "peersrun:", err)
		os.Exit(2)
	}
	if *builds != "" {
		o.FaissBuilds = strings.Split(*builds, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var rows []bench.Row
	for _, s := range strings.Split(*suites, ",") {
		start := time.Now()
		r, err := peers.Run(ctx, s, o, os.Stderr)
		rows = append(rows, r...)
		if err != nil {
			fmt.Fprintf(os.Stderr, "peersrun: %s: %v\n", s, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "peersrun: %s done in %v\n", s, time.Since(start).Round(time.Second))
	}
	print(rows)
	if *out != "" {
		b, _ := json.MarshalIndent(rows, "", " ")
		os.MkdirAll(filepath.Dir(*out), 0o755)
		if err := bench.WriteFileAtomic(*out, b); err != nil {
			fmt.Fprintln(os.Stderr, "peersrun:", err)
			os.Exit(1)
		}
	}
}

func ints(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("bad number %q in %q", f, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// median of the reps' throughput.
func median(r bench.Row) float64 {
	v := make([]float64, len(r.Reps))
	for i, p := range r.Reps {
		v[i] = p.Throughput
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

// print writes one line per row with ours/peer ratios where ours ran.
func print(rows []bench.Row) {
	ours := map[string]float64{}
	for _, r := range rows {
		if r.System == peers.SystemOurs {
			ours[r.Suite+"|"+r.Config] = median(r)
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "suite\tsystem\tconfig\tmedian\tunit\tp50 ms\tp99 ms\tspread\tours/peer")
	for _, r := range rows {
		lo, hi := r.Reps[0].Throughput, r.Reps[0].Throughput
		for _, p := range r.Reps {
			lo, hi = min(lo, p.Throughput), max(hi, p.Throughput)
		}
		m := median(r)
		ratio := ""
		if o, ok := ours[r.Suite+"|"+r.Config]; ok && r.System != peers.SystemOurs && m > 0 {
			ratio = fmt.Sprintf("%.2f×", o/m)
		}
		p := r.Reps[len(r.Reps)/2]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t%s\t%.2f\t%.2f\t%.0f–%.0f\t%s\n", r.Suite, r.System, r.Config, m, r.Unit, p.P50ms, p.P99ms, lo, hi, ratio)
	}
	tw.Flush()
}
