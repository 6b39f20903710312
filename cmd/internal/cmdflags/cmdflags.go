package cmdflags

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/cli"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server/app"
)

// Model binds the E5 encoder flags into c (c.Dir "" = BM25 only).
func Model(fs *flag.FlagSet, c *embed.Config) {
	fs.StringVar(&c.Dir, "model", os.Getenv("MODEL"), "E5 model directory (model.onnx, tokenizer.json, rlsearch.json); default $MODEL; empty = BM25 only")
	fs.StringVar(&c.ORTLib, "ort-lib", "", "ONNX Runtime shared library (default $ONNXRUNTIME_LIB, else libonnxruntime.so.1 on the loader path)")
	fs.IntVar(&c.Sessions, "sessions", 0, "ONNX Runtime sessions in the encoder pool (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&c.MaxLength, "max-length", 0, "token budget per text incl. prefix and specials (0 = model config, default 256)")
	fs.IntVar(&c.BatchSize, "encode-batch", 0, "texts per ONNX Runtime run (0 = 32)")
	fs.StringVar(&c.Provider, "device", "cpu", "where the E5 encoder runs: cpu (ONNX Runtime), gpu or gpu:N (our fp16 forward pass from model.safetensors or model.onnx + config.json; an error when that GPU cannot run it), auto (GPU 0 when usable and its model canary passes, else cpu; never cuda), cuda or cuda:N (ONNX Runtime's CUDA execution provider: needs `make gpu-setup`'s .cache/ort-gpu/libonnxruntime.so.1 as --ort-lib and the CUDA 13 libraries; an error naming what is missing, never the CPU); /healthz says where and why")
	fs.Var(SkipFlag{&c.SkipCanary}, "model-canary", "before the encoder serves on a GPU (--device gpu, auto, cuda), embed a fixed sample on it and on the CPU and require cosine >= 0.999 per text (auto falls back to the CPU on a mismatch, gpu/cuda refuse to start); --model-canary=false skips it")
}

// SkipFlag is a boolean flag, default true, whose false sets *Skip (the
// canary flags: on unless turned off).
type SkipFlag struct{ Skip *bool }

func (f SkipFlag) String() string {
	if f.Skip == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.Skip)
}

// Set parses a boolean; false sets *Skip.
func (f SkipFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.Skip = !v
	return nil
}

// IsBoolFlag lets the flag be given without a value (--gpu-canary).
func (f SkipFlag) IsBoolFlag() bool { return true }

// Multi is a repeatable string flag.
type Multi []string

func (m *Multi) String() string { return strings.Join(*m, ",") }

// Set appends v.
func (m *Multi) Set(v string) error { *m = append(*m, v); return nil }

// Index locates an index and the model to serve its dense vector file
// (app.IndexConfig); CheckDocs is bound by serve's --check-docs
// (--verify-docs, deprecated).
type Index struct {
	Cfg       app.IndexConfig
	CheckDocs bool
	Corpora   []app.Corpus // serve's --index NAME=DIR, repeatable (BindCorpora)
}

// Bind binds --index DIR and the open options.
func (f *Index) Bind(fs *flag.FlagSet) {
	fs.StringVar(&f.Cfg.Dir, "index", "", "index directory built by 'rlsearch index' (required)")
	f.bindOpen(fs)
}

// BindCorpora binds serve's --index: repeatable NAME=DIR (several
// corpora in one process, app.NewMulti), a bare DIR being corpus
// "default"; Cfg.Dir is the first corpus's directory.
func (f *Index) BindCorpora(fs *flag.FlagSet) {
	fs.Var((*corporaFlag)(f), "index", "index directory built by 'rlsearch index', or NAME=DIR to serve several corpora in one process (repeatable; the first is the default; /c/NAME/... selects one); required unless --shards")
	f.bindOpen(fs)
}

// corporaFlag is Index's repeatable --index NAME=DIR.
type corporaFlag Index

func (c *corporaFlag) String() string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, x := range c.Corpora {
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
	for _, x := range c.Corpora {
		if x.Name == name {
			if name == "" {
				return fmt.Errorf("%q: several --index need names (NAME=DIR)", v)
			}
			return fmt.Errorf("%q: corpus %q given twice", v, name)
		}
	}
	c.Corpora = append(c.Corpora, app.Corpus{Name: name, Dir: dir})
	if c.Cfg.Dir == "" {
		c.Cfg.Dir = dir
	}
	return nil
}

// bindOpen binds the index's open options and its model.
func (f *Index) bindOpen(fs *flag.FlagSet) {
	fs.StringVar(&f.Cfg.DenseBackend, "dense-backend", "auto", "dense search: auto (GPU when usable, else exact flat up to 500,000 vectors, else HNSW when its memory need fits, else flat; an error when the vector file does not fit in available memory), flat, hnsw or gpu (an error without a usable GPU)")
	fs.Var(SkipFlag{&f.Cfg.SkipGPUCanary}, "gpu-canary", "before --dense-backend auto or gpu serves search from the GPU, run 128 fixed queries (vector file rows, seeded unit vectors, their negations; k 10, 100, 2049) on it and on the CPU exact flat search over up to 65,536 rows and require the same ids in order with scores within the fp16 error bound (auto falls back to the CPU on a mismatch, gpu refuses to start naming the query; /healthz dense.canary); --gpu-canary=false skips it")
	fs.BoolVar(&f.Cfg.GPUInt8, "gpu-int8", false, "keep an int8 vector file (rlsearch index --dtype int8) int8 on the GPU: half the GPU memory and scan traffic of fp16, exact over the int8 vectors up to the fp16 rounding of the query times the scales; an error, when --dense-backend is auto or gpu, for a vector file that is not int8 or whose dimension is not a multiple of 16")
	fs.BoolVar(&f.Cfg.HNSWCompressed, "hnsw-compressed", false, "serve the HNSW graph compressed when the hnsw backend is chosen (--dense-backend hnsw, or auto choosing it): traversal on int8 codes, the final candidates re-ranked on fp16 rows memory-mapped from dense.f16 in the index directory (written beside the vector file on the first such open, reused after; a stale or damaged one is refused: delete it), the vector file's own vectors released; about Dim + 160 bytes per vector resident at M=16 (ann/README.md)")
	fs.BoolVar(&f.Cfg.HNSWInt8, "hnsw-int8", false, "traverse the HNSW graph, when the hnsw backend is chosen, on int8 codes fitted over the vector file at startup and re-rank the final candidates on the vector file's own rows in memory (scores those of exact search; Dim bytes per vector more than the plain graph; the saved graph is unchanged); ignored with --hnsw-compressed, which traverses on codes already")
	fs.BoolVar(&f.Cfg.FlatInt8Scan, "flat-int8-scan", false, "serve exact flat search (--dense-backend flat, or auto choosing it) through int8 codes of the vector file: each query scans the codes for its top k+16 and re-ranks those on the file's own fp32 or fp16 rows (the same hits as exact search when the true top k are among them: recall@10 1.0 on bge-base, SIFT and Fashion-MNIST); Dim bytes per vector more memory (auto skips the codes when they do not fit, and says so in the startup reason); batch 1 measured 2.3-8.4x faiss exact search on bge-base, SIFT and Fashion-MNIST (ann/README.md); an error for an int8 vector file")
	fs.IntVar(&f.Cfg.HNSWEfSearch, "hnsw-ef", 0, "candidate list size of HNSW searches (raised to topk when smaller); 0 = the graph's own: 64 for a graph built here, the file's efSearch for one imported from faiss (faiss's default 16)")
	fs.IntVar(&f.Cfg.BM25Parallel, "bm25-parallel", 0, "search each query of a BM25 request with fewer queries than this over this many row ranges in parallel (lower latency on many-core nodes, same hits); 0 = one goroutine per query")
	fs.Var(SkipFlag{&f.Cfg.SkipSelfCheck}, "self-check", "with --model, before dense retrieval serves, encode 3 stored passages (first, middle, last row) and require each to retrieve its own row at rank 1: a vector file built with another model is refused, naming both; --self-check=false skips it (a vector file imported with index --vectors from vectors the model did not produce, e.g. a benchmark's generated set)")
	Model(fs, &f.Cfg.Model)
}

// Config is the index configuration the flags name.
func (f *Index) Config() app.IndexConfig {
	c := f.Cfg
	c.CheckDocs = f.CheckDocs
	return c
}

// Open opens the index (and the encoder when --model is set); the closer
// releases both.
func (f *Index) Open(ctx context.Context) (*index.Index, func(), error) {
	return app.OpenIndex(ctx, f.Config())
}

// Programs open an index and the models behind the program runtime
// (programs, mutate, inspect and the mutation benchmark).
type Programs struct {
	Idx Index
	RT  app.RuntimeConfig // Index comes from Idx
}

// Bind binds the index flags and the reranker's.
func (p *Programs) Bind(fs *flag.FlagSet) {
	p.Idx.Bind(fs)
	Rerank(fs, &p.RT.Reranker)
}

// Open returns the program runtime (app.OpenRuntime); the closer releases
// everything.
func (p *Programs) Open(ctx context.Context) (*sdk.Runtime, func(), error) {
	cfg := p.RT
	cfg.Index = p.Idx.Config()
	return app.OpenRuntime(ctx, cfg)
}

// Mutate opens the mutation verifier (`rlsearch mutate`, `rlsearch-bench
// mutate-eval`): the program runtime, the verifier's search
// (sdk.MutateConfig) and Workers, the programs searched at once.
type Mutate struct {
	Programs
	Cfg     sdk.MutateConfig
	Workers int
	Quiet   bool // --quiet: no progress on stderr
}

// Bind binds the runtime's flags and the verifier's.
func (m *Mutate) Bind(fs *flag.FlagSet) {
	m.Programs.Bind(fs)
	cfg, workers := &m.Cfg, &m.Workers
	fs.IntVar(&cfg.Executions, "executions", 0, "execution budget per program (0 = 64, at most 256)")
	fs.IntVar(&cfg.MinGold, "min-gold", 0, "V_ret needs at least this many gold documents printed (0 = all)")
	fs.IntVar(&cfg.MaxVerified, "max-verified", 0, "verified mutations to find per program (0 = 1)")
	fs.IntVar(&cfg.Space.MaxPrint, "max-print", 0, "documents a mutation prints: min(kept, this) (0 = 20, the paper's print budget)")
	fs.BoolVar(&cfg.PoolFromEarlierTurns, "pool-earlier-turns", false, "add the queries of earlier retrieval turns to the query pool")
	fs.BoolVar(&cfg.NoCache, "no-cache", false, "no shared primitive cache: every execution retrieves on its own (the oracle)")
	fs.IntVar(workers, "workers", 4, "programs searched at once")
	fs.BoolVar(&m.Quiet, "quiet", false, "no progress on stderr")
}

// Progress is stderr unless --quiet.
func (m *Mutate) Progress(stderr io.Writer) io.Writer { return ProgressTo(stderr, !m.Quiet) }

// Open checks the flags (usage errors), opens the runtime and returns the
// verifier; the closer releases the runtime.
func (m *Mutate) Open(ctx context.Context) (*sdk.Verifier, func(), error) {
	if m.Workers < 1 {
		return nil, nil, usageErr("--workers %d must be ≥ 1", m.Workers)
	}
	if err := m.Cfg.Validate(); err != nil {
		return nil, nil, usageErr("%v", err)
	}
	rt, closeRT, err := m.Programs.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	v, err := sdk.NewVerifier(rt, m.Cfg)
	if err != nil {
		closeRT()
		return nil, nil, err
	}
	return v, closeRT, nil
}

// Collection opens one hybrid collection (hybrid exec, gen and eval).
type Collection struct {
	Dir   string
	K     int
	Model embed.Config
}

// Bind binds --collection, --k and the encoder.
func (c *Collection) Bind(fs *flag.FlagSet) {
	fs.StringVar(&c.Dir, "collection", "", "collection directory (required)")
	fs.IntVar(&c.K, "k", hybrid.DefaultK, "candidates per retrieval entry (ProRetrieval: K = 20)")
	Model(fs, &c.Model)
}

// Open opens the collection with its encoder; the closer releases both.
func (c *Collection) Open(ctx context.Context) (*hybrid.Collection, func(), error) {
	return app.OpenWith(c.Model, func(enc rlsearch.Encoder) (*hybrid.Collection, error) {
		return hybrid.Open(ctx, c.Dir, hybrid.OpenConfig{K: c.K, Encoder: enc})
	})
}

// DataFile is a file of the shared wiki_multihop set ($RLSEARCH_DATA, else
// the shared/data found above the working directory).
func DataFile(name string) string {
	return filepath.Join(corpus.DataDir(), "wiki_multihop", name)
}

// DefaultQuestions is the shared wiki_multihop question set.
func DefaultQuestions() string { return DataFile("questions.jsonl") }

// ProgressTo is w when on, else nil (no progress).
func ProgressTo(w io.Writer, on bool) io.Writer {
	if on {
		return w
	}
	return nil
}

// usageErr is package cli's.
var usageErr = cli.Usagef
