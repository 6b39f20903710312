package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/gencorpus"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/client"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/verify"
)

// indexCmd builds an index directory (index.Build).
func indexCmd(fs *flag.FlagSet) runFunc {
	var (
		cfg   index.BuildConfig
		model embed.Config
	)
	fs.StringVar(&cfg.Corpus, "corpus", "", "corpus JSONL: {id, contents} or {id, title, text}; plain, .gz or .zst (required)")
	fs.StringVar(&cfg.Dir, "out", "", "index directory to create (required)")
	fs.BoolVar(&cfg.Force, "force", false, "replace an existing index directory")
	k1 := fs.Float64("k1", bm25.DefaultK1, "BM25 k1, term-frequency saturation (Pyserini's default)")
	b := fs.Float64("b", bm25.DefaultB, "BM25 b, length normalisation (Pyserini's default)")
	dtype := fs.String("dtype", "fp16", "dense shard storage: fp16 or fp32 (also int8 with --vectors)")
	fs.StringVar(&cfg.Vectors, "vectors", "", "import the dense shard from this vector file instead of encoding: faiss IndexFlatIP/IndexFlatL2 (e.g. Search-R1's e5_Flat.index), .npy (float32/float16) or .fvecs, one row per passage in corpus order")
	fs.StringVar(&cfg.VectorsEncoder, "vectors-encoder", "", "name of the model that made --vectors (e.g. intfloat/e5-base-v2), recorded in the shard; required without --model")
	fs.BoolVar(&cfg.VectorsUnnormalized, "vectors-unnormalized", false, "accept --vectors rows whose L2 norm is not 1 and serve inner product on them as they are (inner-product files only)")
	budgetMiB := fs.Int64("bm25-budget", bm25.DefaultMemoryBudget>>20, "MiB of BM25 postings held in memory before a sorted run is spilled to disk (the Go heap can reach about twice this; runs go inside the temporary index directory)")
	fs.IntVar(&cfg.EncodeBatch, "batch", index.DefaultEncodeBatch, "passages per encoder call")
	quiet := fs.Bool("quiet", false, "no progress bar")
	fs.IntVar(&cfg.Shards, "shards", 0, "split the corpus into this many shards: --out DIR gets DIR/shard-I-of-N (each a complete index of its rows, BM25 scored with the corpus-wide statistics) and DIR/manifest.json; 0 = one index")
	only := fs.String("shard", "", "with --shards: build only these shards (0-based, comma-separated), e.g. one per machine; every machine reads the whole corpus and writes the same manifest")
	bindModel(fs, &model)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) (err error) {
		if cfg.Only, err = shardList(*only); err != nil {
			return err
		}
		if cfg.DType, err = ann.ParseDType(*dtype); err != nil {
			return usageErr("%v", err)
		}
		if *budgetMiB <= 0 || *budgetMiB > 1<<40 {
			return usageErr("--bm25-budget %d: want a number of MiB in [1, 2^40]", *budgetMiB)
		}
		cfg.BM25 = bm25.Config{K1: k1, B: b, MemoryBudget: *budgetMiB << 20}
		cfg.Progress, cfg.Log = progressTo(stderr, !*quiet), stderr // Log: removals of leftovers of interrupted builds
		enc, hash, done, err := app.OpenEncoder(model)
		if err != nil {
			return err
		}
		defer done()
		cfg.Encoder, cfg.ConfigHash = enc, hash
		if cfg.Shards > 0 || len(cfg.Only) > 0 {
			start := time.Now()
			m, err := index.BuildShards(ctx, cfg)
			if err != nil {
				return err
			}
			built := cfg.Only
			if len(built) == 0 {
				for i := range cfg.Shards {
					built = append(built, i)
				}
			}
			fmt.Fprintln(stdout, m.Summary(cfg.Dir, built, time.Since(start).Seconds()))
			return nil
		}
		meta, err := index.Build(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, meta.Summary(cfg.Dir))
		return nil
	}
}

// verifyCmd checks PATH in full, whatever it is (package verify). Exit
// status 0 when intact, 1 with a message naming the file (and, for block
// formats, the block and offset) of the first corruption.
func verifyCmd(fs *flag.FlagSet) runFunc {
	quiet := fs.Bool("quiet", false, "no progress lines")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 1 {
			return usageErr("want one index, collection or file path, got %d arguments", len(args))
		}
		start := time.Now()
		kind, err := verify.Path(ctx, args[0], progressTo(stderr, !*quiet))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: ok, %s (verified in %.1fs)\n", args[0], kind, time.Since(start).Seconds())
		return nil
	}
}

// gencorpusCmd writes a generated corpus (gencorpus.WriteFile).
func gencorpusCmd(fs *flag.FlagSet) runFunc {
	var cfg gencorpus.Config
	fs.StringVar(&cfg.Seed, "seed-corpus", dataFile("corpus.jsonl"), "real seed corpus JSONL (plain, .gz or .zst); its passages come first, unchanged")
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
		st, err := gencorpus.WriteFile(ctx, cfg, *out, progressTo(stderr, !*quiet))
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

// searchCmd prints the ranked hits of questions (bench.WriteHits), from
// the index or from a running server (one Search-R1 /retrieve request).
func searchCmd(fs *flag.FlagSet) runFunc {
	var idx indexFlags
	idx.bind(fs)
	server := fs.String("server", "", "ask a running server (e.g. http://127.0.0.1:8000) instead of opening --index")
	retriever := fs.String("retriever", "", `"bm25" or "e5" (default: e5 when --model is set, else bm25; with --server the server's default)`)
	k := fs.Int("k", 10, "results per question")
	questions := fs.String("questions", "", "also take questions from this JSONL question set (gold passages are marked *)")
	limit := fs.Int("limit", 5, "how many questions to take from --questions")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
		switch {
		case *k <= 0:
			return usageErr("-k must be positive, got %d", *k)
		case *server != "" && idx.cfg.Dir != "":
			return usageErr("give either --index (search locally) or --server (ask a running server), not both")
		}
		var qs []bench.Question
		for _, a := range args {
			qs = append(qs, bench.Question{Question: a})
		}
		if *questions != "" {
			set, err := bench.LoadQuestions(*questions)
			if err != nil {
				return err
			}
			qs = append(qs, set[:min(*limit, len(set))]...)
		}
		if len(qs) == 0 {
			return usageErr("no question given (pass questions as arguments or --questions FILE)")
		}
		var results [][]client.Result
		if *server != "" {
			if results, err = client.Retrieve(ctx, *server, *retriever, bench.Texts(qs), *k); errors.Is(err, client.ErrBadURL) {
				return usageErr("--server: %v", err)
			}
		} else {
			ix, closeIx, oerr := idx.open(ctx)
			if oerr != nil {
				return oerr
			}
			defer closeIx()
			results, err = ix.Search(ctx, *retriever, bench.Texts(qs), *k)
		}
		if err == nil {
			bench.WriteHits(stdout, qs, results)
		}
		return err
	}
}

// evalCmd prints recall@k of gold passages (bench.EvalIndex).
func evalCmd(fs *flag.FlagSet) runFunc {
	var (
		idx indexFlags
		cfg bench.IndexEvalConfig
	)
	idx.bind(fs)
	fs.StringVar(&cfg.Questions, "questions", defaultQuestions(), "question set JSONL with gold_passage_ids")
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
		ix, closeIx, err := idx.open(ctx)
		if err != nil {
			return err
		}
		defer closeIx()
		return bench.EvalIndex(ctx, ix, qs, cfg, stdout, stderr)
	}
}

// shardList parses --shard: comma-separated 0-based shard numbers ("" =
// none given).
func shardList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return nil, usageErr("--shard %q: bad shard %q, want 0-based shard numbers separated by commas", s, part)
		}
		out = append(out, n)
	}
	return out, nil
}
