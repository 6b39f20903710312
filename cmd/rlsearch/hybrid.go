package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/server/app"
)

// runHybrid dispatches `rlsearch hybrid build|exec`; gen and eval are
// rlsearch-bench's hybrid-gen and hybrid-eval.
func runHybrid(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.RunSub(ctx, "rlsearch hybrid", []command{
		{Name: "build", Summary: "build a collection from rows JSONL and a schema (a file or a shipped name)", Flags: hybridBuild, Required: []string{"schema", "data", "out"}},
		{Name: "exec", Summary: "run programs JSONL ({sql, retrieval_list} or {id, program}) on a collection: results JSONL", Flags: hybridExec, Required: []string{"collection"}},
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
	cmdflags.Model(fs, &model)
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

func hybridExec(fs *flag.FlagSet) runFunc {
	var cf cmdflags.Collection
	cf.Bind(fs)
	in := fs.String("in", "-", "programs JSONL: each line a program {sql, retrieval_list} or {id, program} (default stdin)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		col, done, err := cf.Open(ctx)
		if err != nil {
			return err
		}
		defer done()
		return jsonl.Pipe(*in, "", stdout, func(r io.Reader, name string, w io.Writer) error { return col.ExecJSONL(ctx, r, name, w) })
	}
}
