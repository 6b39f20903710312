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
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/indexbench"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
)

// indexCmd measures one index directory (--index): BM25, dense and
// /retrieve throughput, as scripts/bench-scale.sh reads it. It takes
// every flag of `rlsearch serve` (the same server, in-process).
func indexCmd(fs *flag.FlagSet) runFunc {
	var s cmdflags.Serve
	s.Bind(fs)
	questions := fs.String("questions", cmdflags.DefaultQuestions(), "question set JSONL used as the query workload")
	dur := fs.Duration("duration", 3*time.Second, "time spent on each measurement")
	k := fs.Int("k", 10, "top-k per query")
	concurrency := fs.Int("concurrency", 32, "concurrent HTTP clients for the /retrieve measurement")
	mode := fs.String("mode", "all", "what to measure: all; bm25 (index open time, BM25 batch 1 and batch --batch on GOMAXPROCS cores, no HTTP); http (/retrieve only)")
	batch := fs.Int("batch", 0, "queries per SearchBatch call in the BM25 batch measurement, cycling through the questions (0 = the number of questions)")
	runOut := fs.String("run-out", "", "write the BM25 top-k of every question to this file, TREC run format (qid Q0 docid rank score rlsearch)")
	jsonOut := fs.String("json", "", "also write the measurements to this file as one JSON object")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		// --addr (bound with the serve flags) is where the /retrieve
		// measurement listens when given; by default a free loopback port,
		// so that the bench never collides with a running server on 8000.
		// The result cache is off unless --cache-bytes is given: the
		// workload cycles through one question set, which a cache would
		// answer from memory.
		listenAddr := "127.0.0.1:0"
		cacheSet := false
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "addr":
				listenAddr = s.Addr
			case "cache-bytes":
				cacheSet = true
			}
		})
		if !cacheSet {
			s.Cfg.CacheBytes = rlsearch.Off
		}
		if !slices.Contains(indexbench.Modes, *mode) {
			return usageErr("--mode %q: want one of %v", *mode, indexbench.Modes)
		}
		switch {
		case *batch < 0:
			return usageErr("--batch %d: want >= 0 (0 = the number of questions)", *batch)
		case *k <= 0:
			return usageErr("--k %d: want > 0", *k)
		case *concurrency <= 0:
			return usageErr("--concurrency %d: want > 0", *concurrency)
		case *dur <= 0:
			return usageErr("--duration %v: want > 0", *dur)
		}
		qs, err := bench.LoadQuestions(*questions)
		if err != nil {
			return err
		}
		if len(qs) == 0 {
			return usageErr("--questions %s has no questions", *questions)
		}
		texts := bench.Texts(qs)
		if *batch == 0 {
			*batch = len(texts)
		}

		// Open the index: index.Open alone in bm25 mode, the whole server otherwise.
		var (
			ix       *index.Index
			closeAll func()
			handler  http.Handler
		)
		t0 := time.Now()
		if *mode == indexbench.ModeBM25 {
			ix, closeAll, err = s.Idx.Open(ctx)
		} else {
			var srv *server.Server
			if srv, ix, closeAll, err = newServer(ctx, &s, slog.New(slog.NewJSONHandler(io.Discard, nil))); err == nil {
				handler = srv.Handler()
			}
		}
		if err != nil {
			return err
		}
		defer closeAll()
		openMs := float64(time.Since(t0).Microseconds()) / 1000

		metrics, httpErrs, err := indexbench.Run(ctx, indexbench.Config{Index: ix, Handler: handler, Mode: *mode, Questions: qs, Texts: texts,
			K: *k, Batch: *batch, Concurrency: *concurrency, Duration: *dur, RunOut: *runOut, ListenAddr: listenAddr,
			OpenMs: openMs, CheckDocs: s.Idx.CheckDocs}, stdout)
		if err != nil {
			return err
		}
		if *jsonOut != "" {
			raw, err := json.MarshalIndent(metrics, "", "  ")
			if err != nil {
				return err
			}
			if err := bench.WriteFileAtomic(*jsonOut, append(raw, '\n')); err != nil {
				return err
			}
		}
		if httpErrs > 0 {
			return fmt.Errorf("bench: %d /retrieve requests failed (see the errors column)", httpErrs)
		}
		return nil
	}
}

// newServer assembles the server of `rlsearch serve` from s (app.New);
// closeAll releases everything; on error nothing stays open.
func newServer(ctx context.Context, s *cmdflags.Serve, logger *slog.Logger) (*server.Server, *index.Index, func(), error) {
	cfg, err := s.AppConfig(logger)
	if err != nil {
		return nil, nil, nil, err
	}
	svc, err := app.New(ctx, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return svc.Server, svc.Index, svc.Close, nil
}
