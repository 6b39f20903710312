package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/app"
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
	bindModel(fs, &model)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) (err error) {
		if cfg.DType, err = ann.ParseDType(*dtype); err != nil {
			return usageErr("%v", err)
		}
		if *budgetMiB <= 0 || *budgetMiB > 1<<40 {
			return usageErr("--bm25-budget %d: want a number of MiB in [1, 2^40]", *budgetMiB)
		}
		cfg.BM25 = bm25.Config{K1: k1, B: b, MemoryBudget: *budgetMiB << 20}
		cfg.Progress, cfg.Log = progressTo(stderr, !*quiet), stderr // Log: removals of leftovers of interrupted builds
		enc, hash, err := app.OpenEncoder(model)
		if err != nil {
			return err
		}
		if enc != nil {
			defer enc.Close()
			cfg.Encoder, cfg.ConfigHash = enc, hash
		}
		meta, err := index.Build(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "indexed %d passages (%d empty skipped) into %s in %.1fs (%.0f passages/s); BM25 %d terms",
			meta.NumDocs, meta.Skipped, cfg.Dir, meta.BuildSeconds, float64(meta.NumDocs)/meta.BuildSeconds, meta.BM25.NumTerms)
		if meta.Dense != nil {
			fmt.Fprintf(stdout, "; dense %s %d-d %s", meta.Dense.Model, meta.Dense.Dim, meta.Dense.DType)
		}
		fmt.Fprintln(stdout)
		return nil
	}
}
