package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bench/hybrideval"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/reward"
)

// addHybridEndpoints mounts POST /v1/hybrid/execute over the collections
// under dir (serve's --collections; "" = none). Collections whose text
// fields use e5 embed queries with the index's encoder (--model). The
// collections stay open for the life of the process. It returns an
// executor over them for the ProRetrieval reward, or nil when none were
// loaded.
func addHybridEndpoints(m map[string]server.Endpoint, ix *index.Index, dir string) (reward.HybridExecutor, error) {
	var enc rlsearch.Encoder
	if ix != nil && ix.Encoder() != nil {
		enc = ix.Encoder()
	}
	cols, err := hybrid.OpenCollections(context.Background(), dir, hybrid.OpenConfig{Encoder: enc})
	if err != nil {
		return nil, fmt.Errorf("--collections: %w", err)
	}
	m["/v1/hybrid/execute"] = server.JSON(hybrid.NewService(cols, hybrid.ServiceConfig{}).Serve, server.EndpointOptions{MaxBodyBytes: hybrid.DefaultMaxBodyBytes})
	if len(cols) == 0 {
		return nil, nil
	}
	return hybrid.NewExecutor(cols), nil
}

func runHybrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runSub(ctx, "hybrid", []command{
		{"build", "build a collection from rows JSONL and a schema (a file or a shipped name)", hybridBuild},
		{"exec", "run programs JSONL ({sql, retrieval_list} or {id, program}) on a collection: results JSONL", hybridExec},
		{"gen", "generate benchmark instances JSONL (L1/L2/L3), optionally verbalized by a template or an LLM", hybridGen},
		{"eval", "Hit@1, Hit@3, MRR, NDCG@3 and execution success of predicted (default: gold) programs, per level and modality", hybridEval},
	}, args, stdout, stderr)
}

// imageFlags collect --image FIELD=vectors.jsonl.
type imageFlags map[string]string

func (f imageFlags) String() string { return fmt.Sprint(map[string]string(f)) }
func (f imageFlags) Set(v string) error {
	k, p, ok := strings.Cut(v, "=")
	if !ok || k == "" || p == "" {
		return errors.New("want FIELD=vectors.jsonl")
	}
	f[k] = p
	return nil
}

func hybridBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid build", flag.ContinueOnError)
	var (
		cfg    = hybrid.BuildConfig{ImageVectors: imageFlags{}}
		schema string
		model  modelFlags
	)
	fs.StringVar(&schema, "schema", "", "schema file, or a shipped schema name: "+strings.Join(hybrid.BuiltinSchemas(), ", ")+" (required)")
	fs.StringVar(&cfg.Data, "data", "", "rows JSONL (required)")
	fs.StringVar(&cfg.Dir, "out", "", "collection directory to write (required; an existing collection there is replaced)")
	fs.IntVar(&cfg.Limit, "limit", 0, "keep only the first N rows (0 = all)")
	fs.Var(imageFlags(cfg.ImageVectors), "image", "FIELD=vectors.jsonl: user-supplied vectors {id, vector} of an image field (repeatable)")
	model.bind(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if schema == "" || cfg.Data == "" || cfg.Dir == "" {
		return usageErr("--schema, --data and --out are required")
	}
	s, err := hybrid.ResolveSchema(schema)
	if err != nil {
		return err
	}
	cfg.Schema = s
	enc, _, err := model.open()
	if err != nil {
		return err
	}
	if enc != nil {
		defer enc.Close()
		cfg.Encoder = enc
	}
	meta, err := hybrid.Build(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "built collection %s: %d rows into %s; indexes %s\n", cfg.Schema.Name, meta.Rows, cfg.Dir, meta.IndexSummary())
	return nil
}

// collectionFlags open one collection for exec, gen and eval.
type collectionFlags struct {
	dir   string
	k     int
	model modelFlags
}

func (c *collectionFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "collection", "", "collection directory (required)")
	fs.IntVar(&c.k, "k", hybrid.DefaultK, "candidates per retrieval entry (ProRetrieval: K = 20)")
	c.model.bind(fs)
}

func (c *collectionFlags) open(ctx context.Context) (*hybrid.Collection, func(), error) {
	if c.dir == "" {
		return nil, nil, usageErr("--collection is required")
	}
	return openWith(&c.model, func(enc *embed.Encoder) (*hybrid.Collection, error) {
		cfg := hybrid.OpenConfig{K: c.k}
		if enc != nil {
			cfg.Encoder = enc
		}
		return hybrid.Open(ctx, c.dir, cfg)
	})
}

func hybridExec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid exec", flag.ContinueOnError)
	var cf collectionFlags
	cf.bind(fs)
	in := fs.String("in", "-", "programs JSONL: each line a program {sql, retrieval_list} or {id, program} (default stdin)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	col, done, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	return withFiles(*in, "", stdout, func(r io.Reader, name string, w io.Writer) error { return col.ExecJSONL(ctx, r, name, w) })
}

func hybridGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid gen", flag.ContinueOnError)
	var (
		cf             collectionFlags
		cfg            hybrid.GenConfig
		ov             hybrid.OpenAIVerbalizer
		out, verb, key string
	)
	cf.bind(fs)
	fs.IntVar(&cfg.N, "n", 100, "instances to generate")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.StringVar(&cfg.Level, "level", "", "L1, L2 or L3 (default: the paper's 40/40/20 mix)")
	fs.IntVar(&cfg.MaxTruth, "max-truth", 0, "drop instances whose ground-truth set is larger (0 = 20)")
	fs.StringVar(&out, "out", "-", "instances JSONL (default stdout)")
	fs.StringVar(&verb, "verbalize", "none", "natural-language query (step iv): none, template or openai")
	fs.StringVar(&ov.BaseURL, "llm-url", "", "OpenAI-compatible base URL for --verbalize openai, such as http://127.0.0.1:8001/v1")
	fs.StringVar(&ov.Model, "llm-model", "", "model name for --verbalize openai")
	fs.StringVar(&key, "llm-key-env", "", "environment variable holding the API key (optional)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if key != "" {
		ov.APIKey = os.Getenv(key)
	}
	v, err := hybrid.NewVerbalizer(verb, ov)
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
	if err := jsonl.Output(out, stdout, func(w io.Writer) (err error) {
		st, err = hybrid.GenerateJSONL(ctx, col, cfg, v, w)
		return err
	}); err != nil {
		return err
	}
	sj, _ := json.Marshal(st)
	fmt.Fprintf(stderr, "generated %d instances: %s\n", st.Kept, sj)
	return nil
}

func hybridEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid eval", flag.ContinueOnError)
	var (
		cf     collectionFlags
		cfg    hybrideval.Config
		scores string
	)
	cf.bind(fs)
	fs.StringVar(&cfg.Instances, "instances", "", "instances JSONL from 'rlsearch hybrid gen' (required)")
	fs.StringVar(&cfg.Predictions, "predictions", "", `predicted programs JSONL {"id", "program"} (default: score the gold programs)`)
	fs.StringVar(&scores, "scores", "", "also write per-instance scores JSONL here")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if cfg.Instances == "" {
		return usageErr("--instances is required")
	}
	col, done, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	res, err := hybrideval.Run(ctx, col, cfg)
	if err != nil {
		return err
	}
	if scores != "" {
		if err := jsonl.WriteFile(scores, stdout, func(w *jsonl.Writer) error {
			for _, s := range res.PerInstance() {
				if err := w.Write(s); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	raw, _ := json.MarshalIndent(res.Report, "", "  ")
	fmt.Fprintf(stdout, "%s\n", raw)
	return nil
}
