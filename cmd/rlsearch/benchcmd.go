package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/indexbench"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
)

// runBench dispatches `rlsearch bench`: `compare OLD NEW`, `render
// REPORT.json`, the single-index
// measurement when --index is given (scripts/bench-scale.sh), else the
// suites (benchsuites.go).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "compare" {
		return runBenchCompare(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "render" {
		return runBenchRender(args[1:], stdout, stderr)
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if n := strings.TrimLeft(a, "-"); len(n) < len(a) && (n == "index" || strings.HasPrefix(n, "index=")) {
			return runBenchIndex(ctx, args, stdout, stderr)
		}
	}
	return runBenchSuites(ctx, args, stdout, stderr)
}

// runBenchIndex measures one index directory (--index): BM25, dense and
// /retrieve throughput, as scripts/bench-scale.sh reads it.
func runBenchIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		s           serveFlags
		questions   string
		dur         time.Duration
		k           int
		concurrency int
		mode        string
		batch       int
		runOut      string
		jsonOut     string
	)
	s.bind(fs)
	fs.StringVar(&questions, "questions", defaultQuestions(), "question set JSONL used as the query workload")
	fs.DurationVar(&dur, "duration", 3*time.Second, "time spent on each measurement")
	fs.IntVar(&k, "k", 10, "top-k per query")
	fs.IntVar(&concurrency, "concurrency", 32, "concurrent HTTP clients for the /retrieve measurement")
	fs.StringVar(&mode, "mode", "all", "what to measure: all; bm25 (index open time, BM25 batch 1 and batch --batch on GOMAXPROCS cores, no HTTP); http (/retrieve only)")
	fs.IntVar(&batch, "batch", 0, "queries per SearchBatch call in the BM25 batch measurement, cycling through the questions (0 = the number of questions)")
	fs.StringVar(&runOut, "run-out", "", "write the BM25 top-k of every question to this file, TREC run format (qid Q0 docid rank score rlsearch)")
	fs.StringVar(&jsonOut, "json", "", "also write the measurements to this file as one JSON object")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	// --addr (bound with the serve flags) is where the /retrieve measurement
	// listens when given; by default a free loopback port, so that bench
	// never collides with a running server on 8000.
	// The result cache is off unless --cache-bytes is given: the workload
	// cycles through one question set, which a cache would answer from
	// memory.
	listenAddr := "127.0.0.1:0"
	cacheSet := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "addr":
			listenAddr = s.addr
		case "cache-bytes":
			cacheSet = true
		}
	})
	if !cacheSet {
		s.cfg.CacheBytes = 0
	}
	if !slices.Contains(indexbench.Modes, mode) {
		return usageErr("--mode %q: want one of %v", mode, indexbench.Modes)
	}
	switch {
	case batch < 0:
		return usageErr("--batch %d: want >= 0 (0 = the number of questions)", batch)
	case k <= 0:
		return usageErr("--k %d: want > 0", k)
	case concurrency <= 0:
		return usageErr("--concurrency %d: want > 0", concurrency)
	case dur <= 0:
		return usageErr("--duration %v: want > 0", dur)
	}
	qs, err := bench.LoadQuestions(questions)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return usageErr("--questions %s has no questions", questions)
	}
	texts := bench.Texts(qs)
	if batch == 0 {
		batch = len(texts)
	}

	// Open the index: index.Open alone in bm25 mode, the whole server otherwise.
	var (
		srv      *server.Server
		ix       *index.Index
		closeAll func()
		handler  http.Handler
	)
	t0 := time.Now()
	if mode == indexbench.ModeBM25 {
		ix, closeAll, err = s.idx.open(ctx)
	} else if srv, ix, closeAll, err = s.newServer(ctx, slog.New(slog.NewJSONHandler(io.Discard, nil))); err == nil {
		handler = srv.Handler()
	}
	if err != nil {
		return err
	}
	defer closeAll()
	openMs := float64(time.Since(t0).Microseconds()) / 1000

	metrics, httpErrs, err := indexbench.Run(ctx, indexbench.Config{Index: ix, Handler: handler, Mode: mode, Questions: qs, Texts: texts,
		K: k, Batch: batch, Concurrency: concurrency, Duration: dur, RunOut: runOut, ListenAddr: listenAddr,
		OpenMs: openMs, VerifyDocs: s.idx.verifyDocs}, stdout)
	if err != nil {
		return err
	}
	if jsonOut != "" {
		raw, err := json.MarshalIndent(metrics, "", "  ")
		if err != nil {
			return err
		}
		if err := bench.WriteFileAtomic(jsonOut, append(raw, '\n')); err != nil {
			return err
		}
	}
	if httpErrs > 0 {
		return fmt.Errorf("bench: %d /retrieve requests failed (see the errors column)", httpErrs)
	}
	return nil
}
