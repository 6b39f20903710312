package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
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

const hybridUsage = `usage: rlsearch hybrid <subcommand> [flags]

subcommands:
  build  --schema S --data rows.jsonl --out DIR [--image FIELD=vectors.jsonl] [--limit N] [--model E5DIR]
         S is a schema file or a shipped name (amazon_toys, enron_emails)
  exec   --collection DIR [--in programs.jsonl] [--k 20]     programs JSONL -> results JSONL
  gen    --collection DIR --n 100 [--seed 1] [--level L1|L2|L3] [--max-truth 20] [--out inst.jsonl]
         [--verbalize none|template|openai --llm-url URL --llm-model M --llm-key-env VAR]
  eval   --collection DIR --instances inst.jsonl [--predictions pred.jsonl]
         metrics (Hit@1, Hit@3, MRR, NDCG@3, execution success) overall, per level and per modality;
         without --predictions the gold programs are scored
`

func runHybrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, hybridUsage)
		if len(args) == 0 {
			return usageErr("missing subcommand")
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "build":
		return hybridBuild(ctx, args[1:], stdout, stderr)
	case "exec":
		return hybridExec(ctx, args[1:], stdout, stderr)
	case "gen":
		return hybridGen(ctx, args[1:], stdout, stderr)
	case "eval":
		return hybridEval(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, hybridUsage)
	return usageErr("unknown hybrid subcommand %q", args[0])
}

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

func loadSchemaArg(s string) (*hybrid.Schema, error) {
	if _, err := os.Stat(s); err == nil {
		return hybrid.LoadSchema(s)
	}
	return hybrid.BuiltinSchema(s)
}

func hybridBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid build", flag.ContinueOnError)
	var (
		schema, data, out string
		limit             int
		model             modelFlags
	)
	images := imageFlags{}
	fs.StringVar(&schema, "schema", "", "schema file, or a shipped schema name: "+strings.Join(hybrid.BuiltinSchemas(), ", ")+" (required)")
	fs.StringVar(&data, "data", "", "rows JSONL (required)")
	fs.StringVar(&out, "out", "", "collection directory to write (required; an existing collection there is replaced)")
	fs.IntVar(&limit, "limit", 0, "keep only the first N rows (0 = all)")
	fs.Var(images, "image", "FIELD=vectors.jsonl: user-supplied vectors {id, vector} of an image field (repeatable)")
	model.bind(fs)
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if schema == "" || data == "" || out == "" {
		return usageErr("--schema, --data and --out are required")
	}
	s, err := loadSchemaArg(schema)
	if err != nil {
		return err
	}
	cfg := hybrid.BuildConfig{Schema: s, Data: data, Dir: out, Limit: limit, ImageVectors: images}
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
	var idx []string
	for name, im := range meta.Indexes {
		idx = append(idx, fmt.Sprintf("%s:%s(%d)", name, im.Kind, im.Count))
	}
	sort.Strings(idx)
	fmt.Fprintf(stdout, "built collection %s: %d rows into %s; indexes %s\n", s.Name, meta.Rows, out, strings.Join(idx, " "))
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
	var in string
	cf.bind(fs)
	fs.StringVar(&in, "in", "-", "programs JSONL: each line a program {sql, retrieval_list} or {id, program} (default stdin)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	col, done, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, name, err := jsonl.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	return col.ExecJSONL(ctx, r, name, stdout)
}

func hybridGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid gen", flag.ContinueOnError)
	var (
		cf                       collectionFlags
		cfg                      hybrid.GenConfig
		out, verb, url, mdl, key string
	)
	cf.bind(fs)
	fs.IntVar(&cfg.N, "n", 100, "instances to generate")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed")
	fs.StringVar(&cfg.Level, "level", "", "L1, L2 or L3 (default: the paper's 40/40/20 mix)")
	fs.IntVar(&cfg.MaxTruth, "max-truth", 0, "drop instances whose ground-truth set is larger (0 = 20)")
	fs.StringVar(&out, "out", "-", "instances JSONL (default stdout)")
	fs.StringVar(&verb, "verbalize", "none", "natural-language query (step iv): none, template or openai")
	fs.StringVar(&url, "llm-url", "", "OpenAI-compatible base URL for --verbalize openai, such as http://127.0.0.1:8001/v1")
	fs.StringVar(&mdl, "llm-model", "", "model name for --verbalize openai")
	fs.StringVar(&key, "llm-key-env", "", "environment variable holding the API key (optional)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	ov := hybrid.OpenAIVerbalizer{BaseURL: url, Model: mdl}
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
	insts, st, err := hybrid.Generate(ctx, col, cfg)
	if err != nil {
		return err
	}
	for i := range insts {
		if v != nil {
			q, err := v.Verbalize(ctx, col.Schema(), &insts[i])
			if err != nil {
				return fmt.Errorf("verbalize %s: %w", insts[i].ID, err)
			}
			insts[i].Query = q
		}
	}
	return jsonl.WriteFile(out, stdout, func(w *jsonl.Writer) error {
		for _, in := range insts {
			if err := w.Write(in); err != nil {
				return err
			}
		}
		sj, _ := json.Marshal(st)
		fmt.Fprintf(stderr, "generated %d instances: %s\n", len(insts), sj)
		return nil
	})
}

func hybridEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid eval", flag.ContinueOnError)
	var (
		cf         collectionFlags
		cfg        hybrideval.Config
		perInstOut string
	)
	cf.bind(fs)
	fs.StringVar(&cfg.Instances, "instances", "", "instances JSONL from 'rlsearch hybrid gen' (required)")
	fs.StringVar(&cfg.Predictions, "predictions", "", `predicted programs JSONL {"id", "program"} (default: score the gold programs)`)
	fs.StringVar(&perInstOut, "scores", "", "also write per-instance scores JSONL here")
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
	if perInstOut != "" {
		if err := jsonl.WriteFile(perInstOut, stdout, func(w *jsonl.Writer) error {
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
