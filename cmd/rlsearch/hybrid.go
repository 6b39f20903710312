package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/reward"
)

// hybridCollectionsDir is serve's --collections flag (bound by
// bindHybridServeFlags): a collection directory, or a directory of them,
// served by POST /v1/hybrid/execute.
var hybridCollectionsDir string

func bindHybridServeFlags(fs *flag.FlagSet) {
	fs.StringVar(&hybridCollectionsDir, "collections", "", "hybrid collections for POST /v1/hybrid/execute: one collection directory or a directory of them (see 'rlsearch hybrid build')")
}

// addHybridEndpoints mounts POST /v1/hybrid/execute. Collections whose
// text fields use e5 embed queries with the index's encoder (--model).
// The collections stay open for the life of the process.
//
// It returns an executor over the collections for the ProRetrieval reward,
// or nil when none were loaded.
func addHybridEndpoints(m map[string]server.Endpoint, ix *index.Index) (reward.HybridExecutor, error) {
	var enc rlsearch.Encoder
	if ix != nil && ix.Encoder() != nil {
		enc = ix.Encoder()
	}
	cols, err := openCollections(context.Background(), hybridCollectionsDir, hybrid.OpenConfig{Encoder: enc})
	if err != nil {
		return nil, err
	}
	m["/v1/hybrid/execute"] = server.JSON(hybrid.NewService(cols, hybrid.ServiceConfig{}).Serve, server.EndpointOptions{MaxBodyBytes: hybrid.DefaultMaxBodyBytes})
	if len(cols) == 0 {
		return nil, nil
	}
	return hybrid.NewExecutor(cols), nil
}

// openCollections opens dir as one collection, or each subdirectory that
// holds a collection; "" opens none.
func openCollections(ctx context.Context, dir string, cfg hybrid.OpenConfig) (map[string]*hybrid.Collection, error) {
	cols := map[string]*hybrid.Collection{}
	if dir == "" {
		return cols, nil
	}
	dirs := []string{dir}
	if _, err := os.Stat(filepath.Join(dir, hybrid.MetaFile)); err != nil {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("--collections: %w", err)
		}
		dirs = nil
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), hybrid.MetaFile)); err == nil {
				dirs = append(dirs, filepath.Join(dir, e.Name()))
			}
		}
		if len(dirs) == 0 {
			return nil, fmt.Errorf("--collections %s holds no collection (no %s)", dir, hybrid.MetaFile)
		}
	}
	for _, d := range dirs {
		c, err := hybrid.Open(ctx, d, cfg)
		if err != nil {
			for _, o := range cols {
				o.Close()
			}
			return nil, fmt.Errorf("open collection %s: %w", d, err)
		}
		name := c.Schema().Name
		if _, dup := cols[name]; dup {
			return nil, fmt.Errorf("two collections named %s under %s", name, dir)
		}
		cols[name] = c
	}
	return cols, nil
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
	enc, _, err := c.model.open()
	if err != nil {
		return nil, nil, err
	}
	cfg := hybrid.OpenConfig{K: c.k}
	if enc != nil {
		cfg.Encoder = enc
	}
	col, err := hybrid.Open(ctx, c.dir, cfg)
	if err != nil {
		if enc != nil {
			enc.Close()
		}
		return nil, nil, err
	}
	return col, func() {
		col.Close()
		if enc != nil {
			enc.Close()
		}
	}, nil
}

func openIn(path string) (io.ReadCloser, error) {
	if path == "" || path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

// readJSONL calls fn for each non-empty line.
func readJSONL(r io.Reader, fn func(line int, raw []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := []byte(strings.TrimSpace(sc.Text()))
		if len(raw) == 0 {
			continue
		}
		if err := fn(n, raw); err != nil {
			return err
		}
	}
	return sc.Err()
}

// programLine is one exec input line: a bare program, or {"id", "program"}.
type programLine struct {
	ID      string          `json:"id,omitempty"`
	Program json.RawMessage `json:"program,omitempty"`
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
	r, err := openIn(in)
	if err != nil {
		return err
	}
	defer r.Close()
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	return readJSONL(r, func(line int, raw []byte) error {
		var pl programLine
		var p hybrid.Program
		out := map[string]any{}
		err := json.Unmarshal(raw, &pl)
		if err == nil {
			body := raw
			if len(pl.Program) > 0 {
				body = pl.Program
			}
			err = json.Unmarshal(body, &p)
		}
		if err != nil {
			out["error"] = fmt.Sprintf("line %d: %v", line, err)
			return enc.Encode(out)
		}
		if pl.ID != "" {
			out["id"] = pl.ID
		}
		res, err := col.Execute(ctx, p)
		if err != nil {
			if !errors.Is(err, rlsearch.ErrBadInput) {
				return err
			}
			out["error"] = err.Error()
			return enc.Encode(out)
		}
		out["ids"], out["scores"], out["total"] = res.IDs, res.Scores, res.Total
		return enc.Encode(out)
	})
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
	var v hybrid.Verbalizer
	switch verb {
	case "none":
	case "template":
		v = hybrid.TemplateVerbalizer{}
	case "openai":
		if url == "" || mdl == "" {
			return usageErr("--verbalize openai needs --llm-url and --llm-model")
		}
		ov := &hybrid.OpenAIVerbalizer{BaseURL: url, Model: mdl}
		if key != "" {
			ov.APIKey = os.Getenv(key)
		}
		v = ov
	default:
		return usageErr("--verbalize %q: want none, template or openai", verb)
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
	return writeJSONL(out, stdout, func(enc *json.Encoder) error {
		for _, in := range insts {
			if err := enc.Encode(in); err != nil {
				return err
			}
		}
		sj, _ := json.Marshal(st)
		fmt.Fprintf(stderr, "generated %d instances: %s\n", len(insts), sj)
		return nil
	})
}

func writeJSONL(path string, stdout io.Writer, fn func(*json.Encoder) error) error {
	if path == "" || path == "-" {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		return fn(enc)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(tmp)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	err = fn(enc)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func hybridEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hybrid eval", flag.ContinueOnError)
	var (
		cf         collectionFlags
		instPath   string
		predPath   string
		perInstOut string
	)
	cf.bind(fs)
	fs.StringVar(&instPath, "instances", "", "instances JSONL from 'rlsearch hybrid gen' (required)")
	fs.StringVar(&predPath, "predictions", "", `predicted programs JSONL {"id", "program"} (default: score the gold programs)`)
	fs.StringVar(&perInstOut, "scores", "", "also write per-instance scores JSONL here")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if instPath == "" {
		return usageErr("--instances is required")
	}
	col, done, err := cf.open(ctx)
	if err != nil {
		return err
	}
	defer done()
	var insts []hybrid.Instance
	f, err := os.Open(instPath)
	if err != nil {
		return err
	}
	err = readJSONL(f, func(line int, raw []byte) error {
		var in hybrid.Instance
		if err := json.Unmarshal(raw, &in); err != nil {
			return fmt.Errorf("%s line %d: %w", instPath, line, err)
		}
		insts = append(insts, in)
		return nil
	})
	f.Close()
	if err != nil {
		return err
	}
	preds := map[string]*hybrid.Program{}
	if predPath != "" {
		pf, err := os.Open(predPath)
		if err != nil {
			return err
		}
		err = readJSONL(pf, func(line int, raw []byte) error {
			var pl struct {
				ID      string          `json:"id"`
				Program json.RawMessage `json:"program"`
			}
			if err := json.Unmarshal(raw, &pl); err != nil || pl.ID == "" {
				return fmt.Errorf("%s line %d: want {\"id\", \"program\"}", predPath, line)
			}
			var p hybrid.Program
			if json.Unmarshal(pl.Program, &p) != nil {
				p = hybrid.Program{} // unparsable output: counts as an execution failure
			}
			preds[pl.ID] = &p
			return nil
		})
		pf.Close()
		if err != nil {
			return err
		}
	}
	scores := make([]hybrid.Scores, len(insts))
	for i, in := range insts {
		p := &insts[i].Program
		if predPath != "" {
			p = preds[in.ID]
		}
		if p == nil {
			continue // no prediction: execution failure
		}
		res, err := col.Execute(ctx, *p)
		if err != nil && !errors.Is(err, rlsearch.ErrBadInput) {
			return err
		}
		if err != nil {
			scores[i] = hybrid.Score(in.Truth, nil, false)
		} else {
			scores[i] = hybrid.Score(in.Truth, res.IDs, true)
		}
	}
	if perInstOut != "" {
		if err := writeJSONL(perInstOut, stdout, func(enc *json.Encoder) error {
			for i, in := range insts {
				if err := enc.Encode(map[string]any{"id": in.ID, "level": in.Level, "modality": in.Modality, "scores": scores[i]}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	rep := hybrid.Evaluate(insts, scores)
	raw, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Fprintf(stdout, "%s\n", raw)
	return nil
}
