package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/client"
	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/integrity"
	"github.com/rlsearch/rlsearch/server/app"
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
	cmdflags.Off(fs, &cfg.BM25.K1, "k1", bm25.DefaultK1, "BM25 k1, term-frequency saturation (default Pyserini's; 0 = the default; off or -1 = k1 0, term frequency ignored)")
	cmdflags.Off(fs, &cfg.BM25.B, "b", bm25.DefaultB, "BM25 b, length normalisation (default Pyserini's; 0 = the default; off or -1 = b 0, no length normalisation)")
	dtype := fs.String("dtype", "fp16", "dense vector file storage (dense.shard): fp16 or fp32 (also int8 with --vectors)")
	fs.StringVar(&cfg.Vectors, "vectors", "", "import the dense vectors (the index's dense.shard vector file) from this file instead of encoding: faiss IndexFlatIP/IndexFlatL2 (e.g. Search-R1's e5_Flat.index), .npy (float32/float16) or .fvecs, one row per passage in corpus order")
	fs.StringVar(&cfg.VectorsEncoder, "vectors-encoder", "", "name of the model that made --vectors (e.g. intfloat/e5-base-v2), recorded in the vector file; required without --model")
	fs.BoolVar(&cfg.VectorsUnnormalized, "vectors-unnormalized", false, "accept --vectors rows whose L2 norm is not 1 and serve inner product on them as they are (inner-product files only)")
	budgetMiB := fs.Int64("bm25-budget", bm25.DefaultMemoryBudget>>20, "MiB of BM25 postings held in memory before a sorted run is spilled to disk (the Go heap can reach about twice this; runs go inside the temporary index directory)")
	fs.IntVar(&cfg.EncodeBatch, "batch", index.DefaultEncodeBatch, "passages per encoder call")
	quiet := fs.Bool("quiet", false, "no progress bar")
	fs.IntVar(&cfg.Shards, "shards", 0, "split the corpus into this many shards: --out DIR gets DIR/shard-I-of-N (each a complete index of its rows, BM25 scored with the corpus-wide statistics) and DIR/manifest.json; 0 = one index")
	only := fs.String("shard", "", "with --shards: build only these shards (0-based, comma-separated), e.g. one per machine; every machine reads the whole corpus and writes the same manifest")
	cmdflags.Model(fs, &model)
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
		cfg.BM25.MemoryBudget = *budgetMiB << 20
		cfg.Progress, cfg.Log = cmdflags.ProgressTo(stderr, !*quiet), stderr // Log: removals of leftovers of interrupted builds
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

// checkCmd checks PATH in full, whatever it is (package integrity). Exit
// status 0 when intact, 1 with a message naming the file (and, for block
// formats, the block and offset) of the first corruption.
func checkCmd(fs *flag.FlagSet) runFunc {
	quiet := fs.Bool("quiet", false, "no progress lines")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) != 1 {
			return usageErr("want one index, collection or file path, got %d arguments", len(args))
		}
		start := time.Now()
		kind, err := integrity.Path(ctx, args[0], cmdflags.ProgressTo(stderr, !*quiet))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: ok, %s (checked in %.1fs)\n", args[0], kind, time.Since(start).Seconds())
		return nil
	}
}

// searchCmd prints the ranked hits of questions (writeHits), from
// the index or from a running server (one Search-R1 /retrieve request).
func searchCmd(fs *flag.FlagSet) runFunc {
	var idx cmdflags.Index
	idx.Bind(fs)
	server := fs.String("server", "", "ask a running server (e.g. http://127.0.0.1:8000) instead of opening --index")
	retriever := fs.String("retriever", "", `"bm25" or "e5" (default: e5 when --model is set, else bm25; with --server the server's default)`)
	k := fs.Int("k", 10, "results per question")
	questions := fs.String("questions", "", "also take questions from this JSONL question set (gold passages are marked *)")
	limit := fs.Int("limit", 5, "how many questions to take from --questions")
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
		switch {
		case *k <= 0:
			return usageErr("-k must be positive, got %d", *k)
		case *server != "" && idx.Cfg.Dir != "":
			return usageErr("give either --index (search locally) or --server (ask a running server), not both")
		}
		var qs []corpus.Question
		for _, a := range args {
			qs = append(qs, corpus.Question{Question: a})
		}
		if *questions != "" {
			set, err := corpus.LoadQuestions(*questions)
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
			if results, err = client.Retrieve(ctx, *server, *retriever, corpus.Texts(qs), *k); errors.Is(err, client.ErrBadURL) {
				return usageErr("--server: %v", err)
			}
		} else {
			ix, closeIx, oerr := idx.Open(ctx)
			if oerr != nil {
				return oerr
			}
			defer closeIx()
			results, err = ix.Search(ctx, *retriever, corpus.Texts(qs), *k)
		}
		if err == nil {
			writeHits(stdout, qs, results)
		}
		return err
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

// writeHits prints each question of qs and its ranked hits (results[i]
// for qs[i]: rank, score, title, id), marking gold passages with *.
func writeHits(w io.Writer, qs []corpus.Question, results [][]client.Result) {
	for i, q := range qs {
		fmt.Fprintf(w, "Q: %s\n", q.Question)
		if len(results[i]) == 0 {
			fmt.Fprintf(w, "   (no results)\n")
		}
		for j, r := range results[i] {
			mark := " "
			if slices.Contains(q.GoldIDs, r.Document.ID) {
				mark = "*"
			}
			fmt.Fprintf(w, " %s%2d. %8.4f  %s  [%s]\n", mark, j+1, r.Score, r.Document.Title(), r.Document.ID)
		}
		fmt.Fprintln(w)
	}
}
