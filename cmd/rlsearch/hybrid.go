package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench/hybrideval"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/server/app"
)

func runHybrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.RunSub(ctx, "rlsearch hybrid", []command{
		{Name: "build", Summary: "build a collection from rows JSONL and a schema (a file or a shipped name)", Flags: hybridBuild, Required: []string{"schema", "data", "out"}},
		{Name: "exec", Summary: "run programs JSONL ({sql, retrieval_list} or {id, program}) on a collection: results JSONL", Flags: hybridExec, Required: []string{"collection"}},
		{Name: "gen", Summary: "generate benchmark instances JSONL (L1/L2/L3), optionally verbalized by a template or an LLM", Flags: hybridGen, Required: []string{"collection"}},
		{Name: "eval", Summary: "Hit@1, Hit@3, MRR, NDCG@3 and execution success of predicted (default: gold) programs, per level and modality", Flags: hybridEval, Required: []string{"collection", "instances"}},
	}, args, stdout, stderr)
}

func hybridBuild(fs *flag.FlagSet) runFunc {
	var (
		cfg   = hybrid.BuildConfig{ImageVectors: map[string]string{}}
		model embed.Config
	)
	schema := fs.String("schema", "", "schema file, or a shipped schema name: "+strings.Join(hybrid.BuiltinSchemas(), ", ")+" (required)")
	fs.StringVar(&cfg.Data, "data", "", "rows JSONL (required)")
	fs.StringVar(&cfg.Dir, "out", "", "collection directory to write (required; an existing collection there is replaced)")
	fs.IntVar(&cfg.Limit, "limit", 0, "keep only the first N rows (0 = all)")
	fs.Var(cli.KeyValues(cfg.ImageVectors), "image", "FIELD=vectors.jsonl: user-supplied vectors {id, vector} of an image field (repeatable)")
	bindModel(fs, &model)
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) (err error) {
		if cfg.Schema, err = hybrid.ResolveSchema(*schema); err != nil {
			return err
		}
		enc, _, done, err := app.OpenEncoder(model)
		if err != nil {
			return err
		}
		defer done()
		cfg.Encoder = enc
		meta, err := hybrid.Build(ctx, cfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "built collection %s: %d rows into %s; indexes %s\n", cfg.Schema.Name, meta.Rows, cfg.Dir, meta.IndexSummary())
		return nil
	}
}

// collectionFlags open one collection for exec, gen and eval.
type collectionFlags struct {
	dir   string
	k     int
	model embed.Config
}

func (c *collectionFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "collection", "", "collection directory (required)")
	fs.IntVar(&c.k, "k", hybrid.DefaultK, "candidates per retrieval entry (ProRetrieval: K = 20)")
	bindModel(fs, &c.model)
}

func (c *collectionFlags) open(ctx context.Context) (*hybrid.Collection, func(), error) {
	return app.OpenWith(c.model, func(enc rlsearch.Encoder) (*hybrid.Collection, error) {
		return hybrid.Open(ctx, c.dir, hybrid.OpenConfig{K: c.k, Encoder: enc})
	})
}

func hybridExec(fs *flag.FlagSet) runFunc {
	var cf collectionFlags
	cf.bind(fs)
	in := fs.String("in", "-", "programs JSONL: each line a program {sql, retrieval_list} or {id, program} (default stdin)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		col, done, err := cf.open(ctx)
		if err != nil {
			return err
		}
		defer done()
		return jsonl.Pipe(*in, "", stdout, func(r io.Reader, name string, w io.Writer) error { return col.ExecJSONL(ctx, r, name, w) })
	}
}

func hybridGen(fs *flag.FlagSet) runFunc {
	var (
		cf  collectionFlags
		cfg hybrid.GenConfig
		ov  hybrid.OpenAIVerbalizer
	)
	cf.bind(fs)
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
		col, done, err := cf.open(ctx)
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

func hybridEval(fs *flag.FlagSet) runFunc {
	var (
		cf  collectionFlags
		cfg hybrideval.Config
	)
	cf.bind(fs)
	fs.StringVar(&cfg.Instances, "instances", "", "instances JSONL from 'rlsearch hybrid gen' (required)")
	fs.StringVar(&cfg.Predictions, "predictions", "", `predicted programs JSONL {"id", "program"} (default: score the gold programs)`)
	scores := fs.String("scores", "", "also write per-instance scores JSONL here")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		col, done, err := cf.open(ctx)
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
