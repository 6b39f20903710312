package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/jsonl"
)

var errUsage = errors.New("usage")

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

// modelFlags are shared by every command that may embed text, so that the
// CLI, the server and the bench configure the encoder the same way.
type modelFlags struct{ cfg embed.Config }

func (m *modelFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&m.cfg.Dir, "model", os.Getenv("MODEL"), "E5 model directory (model.onnx, tokenizer.json, rlsearch.json); default $MODEL; empty = BM25 only")
	fs.StringVar(&m.cfg.ORTLib, "ort-lib", "", "ONNX Runtime shared library (default $ONNXRUNTIME_LIB, else libonnxruntime.so.1 on the loader path)")
	fs.IntVar(&m.cfg.Sessions, "sessions", 0, "ONNX Runtime sessions in the encoder pool (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&m.cfg.MaxLength, "max-length", 0, "token budget per text incl. prefix and specials (0 = model config, default 256)")
	fs.IntVar(&m.cfg.BatchSize, "encode-batch", 0, "texts per ONNX Runtime run (0 = 32)")
}

// open loads the encoder and the hash of its configuration, or returns
// nil when no model was given.
func (m *modelFlags) open() (*embed.Encoder, uint64, error) {
	if m.cfg.Dir == "" {
		return nil, 0, nil
	}
	enc, err := embed.Open(m.cfg)
	if err != nil {
		return nil, 0, err
	}
	h, err := embed.ConfigHash(m.cfg.Dir)
	if err != nil {
		enc.Close()
		return nil, 0, err
	}
	return enc, h, nil
}

// indexFlags locate an index and the model to serve its dense shard.
type indexFlags struct {
	dir        string
	model      modelFlags
	verifyDocs bool // set by serve's --verify-docs
	backend    string
	bm25Par    int
}

func (f *indexFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "index", "", "index directory built by 'rlsearch index' (required)")
	fs.StringVar(&f.backend, "dense-backend", "auto", "dense search: auto (GPU when usable, else exact flat up to 500,000 vectors, else HNSW when its memory need fits, else flat; an error when the shard does not fit in available memory), flat, hnsw or gpu (an error without a usable GPU)")
	fs.IntVar(&f.bm25Par, "bm25-parallel", 0, "search each query of a BM25 request with fewer queries than this over this many row ranges in parallel (lower latency on many-core nodes, same hits); 0 = one goroutine per query")
	f.model.bind(fs)
}

// open opens the index (and the encoder when --model is set). The returned
// closer releases both.
func (f *indexFlags) open(ctx context.Context) (*index.Index, func(), error) {
	if f.dir == "" {
		return nil, nil, usageErr("--index is required")
	}
	if f.bm25Par < 0 {
		return nil, nil, usageErr("--bm25-parallel %d: want >= 0", f.bm25Par)
	}
	return openWith(&f.model, func(enc *embed.Encoder) (*index.Index, error) {
		cfg := index.OpenConfig{VerifyDocs: f.verifyDocs, DenseBackend: f.backend, BM25Parallel: f.bm25Par}
		if enc != nil {
			cfg.Encoder = enc
		}
		return index.Open(ctx, f.dir, cfg)
	})
}

// openWith opens m's encoder (nil without --model: then leave the
// Config's Encoder unset, a nil interface) and what open opens with it.
// The closer releases both; on error nothing stays open.
func openWith[T interface{ Close() error }](m *modelFlags, open func(enc *embed.Encoder) (T, error)) (T, func(), error) {
	var zero T
	enc, _, err := m.open()
	if err != nil {
		return zero, nil, err
	}
	closeEnc := func() {
		if enc != nil {
			enc.Close()
		}
	}
	v, err := open(enc)
	if err != nil {
		closeEnc()
		return zero, nil, err
	}
	return v, func() { v.Close(); closeEnc() }, nil
}

// parseFlags parses args, allowing flags after positional arguments
// ("search 'question' -k 5"); the positional arguments are left in
// fs.Args(). "--" ends flag parsing. Usage goes to stderr on error.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageErr("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		// flag.Parse stops at the first positional argument, or after "--".
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

// intList parses "1,5,10,20".
func intList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n <= 0 {
			return nil, usageErr("bad k %q in %q: want positive integers separated by commas", part, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// defaultQuestions is the shared wiki_multihop question set ($RLSEARCH_DATA,
// else the shared/data found above the working directory).
func defaultQuestions() string {
	return filepath.Join(corpus.DataDir(), "wiki_multihop", "questions.jsonl")
}

// withFiles runs fn on the input at in ("" or "-" = stdin; name is its
// name for errors) and the output at out, written atomically ("" or "-" =
// stdout, unbuffered: fn buffers).
func withFiles(in, out string, stdout io.Writer, fn func(r io.Reader, name string, w io.Writer) error) error {
	r, name, err := jsonl.Open(in)
	if err != nil {
		return err
	}
	defer r.Close()
	return jsonl.Output(out, stdout, func(w io.Writer) error { return fn(r, name, w) })
}
