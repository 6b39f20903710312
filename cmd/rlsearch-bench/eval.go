package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/bench/hybrideval"
	"github.com/rlsearch/rlsearch/bench/mutateeval"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// evalCmd prints recall@k of gold passages (bench.EvalIndex).
func evalCmd(fs *flag.FlagSet) runFunc {
	var (
		idx cmdflags.Index
		cfg bench.IndexEvalConfig
	)
	idx.Bind(fs)
	fs.StringVar(&cfg.Questions, "questions", cmdflags.DefaultQuestions(), "question set JSONL with gold_passage_ids")
	fs.StringVar(&cfg.Retriever, "retriever", "all", `"bm25", "e5" or "all" (every retriever the index serves)`)
	ks := fs.String("k", "1,5,10,20", "cut-offs for recall@k")
	fs.IntVar(&cfg.Batch, "batch", 64, "questions per retrieval call")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) (err error) {
		if cfg.Ks, err = cli.Ints("k", *ks); err != nil {
			return err
		}
		qs, err := bench.LoadQuestions(cfg.Questions)
		if err != nil {
			return err
		}
		ix, closeIx, err := idx.Open(ctx)
		if err != nil {
			return err
		}
		defer closeIx()
		return bench.EvalIndex(ctx, ix, qs, cfg, stdout, stderr)
	}
}

// gencorpusCmd writes a generated corpus (gencorpus.WriteFile).
func gencorpusCmd(fs *flag.FlagSet) runFunc {
	var cfg gencorpus.Config
	fs.StringVar(&cfg.Seed, "seed-corpus", cmdflags.DataFile("corpus.jsonl"), "real seed corpus JSONL (plain, .gz or .zst); its passages come first, unchanged")
	fs.IntVar(&cfg.N, "n", 0, "total passages to write, seed passages included (required; wiki-18 is 21015324)")
	fs.Int64Var(&cfg.RandSeed, "seed", 1, "random seed: the same seed, corpus and flags give the same bytes")
	fs.StringVar(&cfg.Model, "model", gencorpus.ModelTopical, "generative model: topical (words from a seed passage's topic mixed with the global unigram) or unigram (independent words)")
	fs.Float64Var(&cfg.TopicProb, "topic-prob", gencorpus.DefaultTopicProb, "topical model: probability that a word comes from the topic passage, in (0, 1]")
	rare := fs.Bool("rare-variants", true, "topical model: write words that occur once in the seed as suffixed variants whose number grows with the square root of the corpus size (Heaps' law); false keeps the seed vocabulary")
	fs.IntVar(&cfg.Workers, "workers", 0, "generating goroutines (0 = GOMAXPROCS); the output does not depend on it")
	out := fs.String("out", "", "output JSONL file, written atomically; .zst or .gz compresses (required)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		cfg.NoRareVariants = !*rare
		if !(cfg.TopicProb > 0 && cfg.TopicProb <= 1) { // Config reads 0 as the default: check the flag
			return usageErr("--topic-prob %v: want a probability in (0, 1]", cfg.TopicProb)
		}
		st, err := gencorpus.WriteFile(ctx, cfg, *out, cmdflags.ProgressTo(stderr, !*quiet))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s: %d passages (%d real, %d generated), %.1f MB uncompressed, %.1fs, %.0f passages/s\n",
			*out, st.Passages, st.Real, st.Generated, float64(st.Bytes)/1e6, st.Elapsed.Seconds(), float64(st.Passages)/max(st.Elapsed.Seconds(), 1e-9))
		return nil
	}
}

// corpusstatsCmd prints gencorpus.CollectStats of each FILE[@FROM:TO].
func corpusstatsCmd(fs *flag.FlagSet) runFunc {
	workers := fs.Int("workers", 0, "goroutines analyzing passages (0 = GOMAXPROCS)")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) == 0 {
			return usageErr("no corpus file given")
		}
		var all []*gencorpus.CorpusStats
		for _, arg := range args {
			path, from, to, err := corpus.ParseRows(arg)
			if err != nil {
				return usageErr("%v", err)
			}
			st, err := gencorpus.CollectStats(ctx, path, gencorpus.StatsConfig{Label: arg, Workers: *workers, From: from, To: to})
			if err != nil {
				return err
			}
			all = append(all, st)
		}
		return gencorpus.WriteStatsTable(stdout, all)
	}
}

// mutateEvalCmd is the single-query width-3 BM25 experiment over a
// question set (mutateeval.Run) with the verifier of `rlsearch mutate`: a
// JSON summary out.
func mutateEvalCmd(fs *flag.FlagSet) runFunc {
	var (
		m  cmdflags.Mutate
		ev mutateeval.Config
	)
	m.Bind(fs)
	fs.StringVar(&ev.Questions, "questions", cmdflags.DefaultQuestions(), "question set")
	datasets := fs.String("datasets", "hotpotqa,musique", "datasets of the question set (comma-separated; empty = all)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		v, done, err := m.Open(ctx)
		if err != nil {
			return err
		}
		defer done()
		ev.Workers = m.Workers
		ev.Progress = m.Progress(stderr)
		if *datasets != "" {
			ev.Datasets = strings.Split(*datasets, ",")
		}
		sum, err := mutateeval.Run(ctx, v, ev)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
}

// hybridGenCmd writes generated benchmark instances of a collection
// (hybrid.GenerateJSONL).
func hybridGenCmd(fs *flag.FlagSet) runFunc {
	var (
		cf  cmdflags.Collection
		cfg hybrid.GenConfig
		ov  hybrid.OpenAIVerbalizer
	)
	cf.Bind(fs)
	fs.IntVar(&cfg.N, "n", 100, "instances to generate")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.StringVar(&cfg.Level, "level", "", "L1, L2 or L3 (default: the paper's 40/40/20 mix)")
	fs.IntVar(&cfg.MaxTruth, "max-truth", 0, "drop instances whose ground-truth set is larger (0 = 20)")
	out := fs.String("out", "-", "instances JSONL (default stdout)")
	verb := fs.String("verbalize", "none", "natural-language query (step iv): none, template or openai")
	fs.StringVar(&ov.BaseURL, "llm-url", "", "OpenAI-compatible base URL for --verbalize openai, such as http://127.0.0.1:8001/v1")
	fs.StringVar(&ov.Model, "llm-model", "", "model name for --verbalize openai")
	key := fs.String("llm-key-env", "", "environment variable holding the API key (optional)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		if *key != "" {
			ov.APIKey = os.Getenv(*key)
		}
		v, err := hybrid.NewVerbalizer(*verb, ov)
		if err != nil {
			return usageErr("%v", err)
		}
		if err := cfg.Validate(); err != nil {
			return usageErr("%v", err)
		}
		col, done, err := cf.Open(ctx)
		if err != nil {
			return err
		}
		defer done()
		var st hybrid.GenStats
		if err := jsonl.Output(*out, stdout, func(w io.Writer) (err error) {
			st, err = hybrid.GenerateJSONL(ctx, col, cfg, v, w)
			return err
		}); err != nil {
			return err
		}
		sj, _ := json.Marshal(st)
		fmt.Fprintf(stderr, "generated %d instances: %s\n", st.Kept, sj)
		return nil
	}
}

// hybridEvalCmd scores predicted (default: gold) programs of generated
// instances (hybrideval.Run).
func hybridEvalCmd(fs *flag.FlagSet) runFunc {
	var (
		cf  cmdflags.Collection
		cfg hybrideval.Config
	)
	cf.Bind(fs)
	fs.StringVar(&cfg.Instances, "instances", "", "instances JSONL from 'rlsearch-bench hybrid-gen' (required)")
	fs.StringVar(&cfg.Predictions, "predictions", "", `predicted programs JSONL {"id", "program"} (default: score the gold programs)`)
	scores := fs.String("scores", "", "also write per-instance scores JSONL here")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		col, done, err := cf.Open(ctx)
		if err != nil {
			return err
		}
		defer done()
		res, err := hybrideval.Run(ctx, col, cfg)
		if err != nil {
			return err
		}
		if err := res.WriteScores(*scores, stdout); err != nil {
			return err
		}
		raw, _ := json.MarshalIndent(res.Report, "", "  ")
		fmt.Fprintf(stdout, "%s\n", raw)
		return nil
	}
}
