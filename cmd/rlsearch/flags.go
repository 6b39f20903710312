package main

import (
	"context"
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
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/server/app"
)

// The flag groups below are bound once each and shared by every command
// that needs them, so that the CLI, the server and the bench configure the
// encoder, the index and the reranker the same way.

// usageErr and parseFlags are package cli's, for the commands that parse
// their own arguments (bench).
var (
	usageErr   = cli.Usagef
	parseFlags = cli.Parse
)

// bindModel binds the E5 encoder flags into c (c.Dir "" = BM25 only).
func bindModel(fs *flag.FlagSet, c *embed.Config) {
	fs.StringVar(&c.Dir, "model", os.Getenv("MODEL"), "E5 model directory (model.onnx, tokenizer.json, rlsearch.json); default $MODEL; empty = BM25 only")
	fs.StringVar(&c.ORTLib, "ort-lib", "", "ONNX Runtime shared library (default $ONNXRUNTIME_LIB, else libonnxruntime.so.1 on the loader path)")
	fs.IntVar(&c.Sessions, "sessions", 0, "ONNX Runtime sessions in the encoder pool (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&c.MaxLength, "max-length", 0, "token budget per text incl. prefix and specials (0 = model config, default 256)")
	fs.IntVar(&c.BatchSize, "encode-batch", 0, "texts per ONNX Runtime run (0 = 32)")
	fs.StringVar(&c.Provider, "device", "cpu", "where the E5 encoder runs: cpu (ONNX Runtime), gpu or gpu:N (our fp16 forward pass from model.safetensors or model.onnx + config.json; an error when that GPU cannot run it), auto (GPU 0 when usable and its model canary passes, else cpu; never cuda), cuda or cuda:N (ONNX Runtime's CUDA execution provider: needs `make gpu-setup`'s .cache/ort-gpu/libonnxruntime.so.1 as --ort-lib and the CUDA 13 libraries; an error naming what is missing, never the CPU); /healthz says where and why")
	fs.Var(skipFlag{&c.SkipCanary}, "model-canary", "before the encoder serves on a GPU (--device gpu, auto, cuda), embed a fixed sample on it and on the CPU and require cosine >= 0.999 per text (auto falls back to the CPU on a mismatch, gpu/cuda refuse to start); --model-canary=false skips it")
}

// skipFlag is a boolean flag, default true, whose false sets *skip (the
// canary flags: on unless turned off).
type skipFlag struct{ skip *bool }

func (f skipFlag) String() string {
	if f.skip == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.skip)
}

func (f skipFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.skip = !v
	return nil
}

func (f skipFlag) IsBoolFlag() bool { return true }

// indexFlags locate an index and the model to serve its dense shard
// (app.IndexConfig); verifyDocs is bound by serve's --verify-docs.
type indexFlags struct {
	cfg        app.IndexConfig
	verifyDocs bool
	corpora    []app.Corpus // serve's --index NAME=DIR, repeatable (bindCorpora)
}

func (f *indexFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.Dir, "index", "", "index directory built by 'rlsearch index' (required)")
	f.bindOpen(fs)
}

// bindCorpora binds serve's --index: repeatable NAME=DIR (several
// corpora in one process, app.NewMulti), a bare DIR being corpus
// "default"; cfg.Dir is the first corpus's directory.
func (f *indexFlags) bindCorpora(fs *flag.FlagSet) {
	fs.Var((*corporaFlag)(f), "index", "index directory built by 'rlsearch index', or NAME=DIR to serve several corpora in one process (repeatable; the first is the default; /c/NAME/... selects one); required unless --shards")
	f.bindOpen(fs)
}

// corporaFlag is indexFlags' repeatable --index NAME=DIR.
type corporaFlag indexFlags

func (c *corporaFlag) String() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, x := range c.corpora {
		parts = append(parts, x.Name+"="+x.Dir)
	}
	return strings.Join(parts, ",")
}

func (c *corporaFlag) Set(v string) error {
	name, dir, ok := strings.Cut(v, "=")
	if !ok || strings.ContainsAny(name, `/\`) {
		name, dir = "", v // a bare directory (which may hold '=' after a '/')
	}
	if dir == "" {
		return fmt.Errorf("%q: want DIR or NAME=DIR", v)
	}
	for _, x := range c.corpora {
		if x.Name == name {
			if name == "" {
				return fmt.Errorf("%q: several --index need names (NAME=DIR)", v)
			}
			return fmt.Errorf("%q: corpus %q given twice", v, name)
		}
	}
	c.corpora = append(c.corpora, app.Corpus{Name: name, Dir: dir})
	if c.cfg.Dir == "" {
		c.cfg.Dir = dir
	}
	return nil
}

// bindOpen binds the index's open options and its model.
func (f *indexFlags) bindOpen(fs *flag.FlagSet) {
	fs.StringVar(&f.cfg.DenseBackend, "dense-backend", "auto", "dense search: auto (GPU when usable, else exact flat up to 500,000 vectors, else HNSW when its memory need fits, else flat; an error when the shard does not fit in available memory), flat, hnsw or gpu (an error without a usable GPU)")
	fs.Var(skipFlag{&f.cfg.SkipGPUCanary}, "gpu-canary", "before --dense-backend auto or gpu serves search from the GPU, run 128 fixed queries (shard rows, seeded unit vectors, their negations; k 10, 100, 2049) on it and on the CPU exact flat search over up to 65,536 rows and require the same ids in order with scores within the fp16 error bound (auto falls back to the CPU on a mismatch, gpu refuses to start naming the query; /healthz dense.canary); --gpu-canary=false skips it")
	fs.BoolVar(&f.cfg.GPUInt8, "gpu-int8", false, "keep an int8 shard (rlsearch index --dtype int8) int8 on the GPU: half the GPU memory and scan traffic of fp16, exact over the int8 vectors up to the fp16 rounding of the query times the scales; an error, when --dense-backend is auto or gpu, for a shard that is not int8 or whose dimension is not a multiple of 16")
	fs.BoolVar(&f.cfg.HNSWCompressed, "hnsw-compressed", false, "serve the HNSW graph compressed when the hnsw backend is chosen (--dense-backend hnsw, or auto choosing it): traversal on int8 codes, the final candidates re-ranked on fp16 rows memory-mapped from dense.f16 in the index directory (written beside the shard on the first such open, reused after; a stale or damaged one is refused: delete it), the shard's own vectors released; about Dim + 160 bytes per vector resident at M=16 (ann/README.md)")
	fs.IntVar(&f.cfg.HNSWEfSearch, "hnsw-ef", 0, "candidate list size of HNSW searches (raised to topk when smaller); 0 = the graph's own: 64 for a graph built here, the file's efSearch for one imported from faiss (faiss's default 16)")
	fs.IntVar(&f.cfg.BM25Parallel, "bm25-parallel", 0, "search each query of a BM25 request with fewer queries than this over this many row ranges in parallel (lower latency on many-core nodes, same hits); 0 = one goroutine per query")
	bindModel(fs, &f.cfg.Model)
}

// config is the index configuration the flags name.
func (f *indexFlags) config() app.IndexConfig {
	c := f.cfg
	c.VerifyDocs = f.verifyDocs
	return c
}

// open opens the index (and the encoder when --model is set); the closer
// releases both.
func (f *indexFlags) open(ctx context.Context) (*index.Index, func(), error) {
	return app.OpenIndex(ctx, f.config())
}

// dataFile is a file of the shared wiki_multihop set ($RLSEARCH_DATA, else
// the shared/data found above the working directory).
func dataFile(name string) string {
	return filepath.Join(corpus.DataDir(), "wiki_multihop", name)
}

// defaultQuestions is the shared wiki_multihop question set.
func defaultQuestions() string { return dataFile("questions.jsonl") }

// progressTo is w when on, else nil (no progress).
func progressTo(w io.Writer, on bool) io.Writer {
	if on {
		return w
	}
	return nil
}
