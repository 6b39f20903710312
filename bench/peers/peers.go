package peers

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/internal/stubsdk"
)

// Python is the interpreter every peer runs under: Debian's, where the
// apt packages of `make bench-setup` are importable.
const Python = "/usr/bin/python3"

// Sentinel errors.
var (
	// ErrUnknownSuite: the suite has no peer here.
	ErrUnknownSuite = errors.New("peers: no peer for this suite")
	// ErrMissing: a peer's packages or inputs are not installed; the
	// message names what is missing and the make target that installs it.
	ErrMissing = errors.New("peers: peer not installed")
	// ErrOptions: a bad Options field.
	ErrOptions = errors.New("peers: bad options")
	// ErrPeer: a peer process failed (its stderr tail is in the message).
	ErrPeer = errors.New("peers: peer failed")
)

// Suites are the suites with a peer here.
var Suites = []string{"flat", "hnsw", "programs", "serve"}

//go:embed faiss_peer.py programs_peer.py searchr1_server.py e5_torch.py
var scripts embed.FS

// VectorSet is one vector data set for the flat and hnsw suites: .fvecs or
// .bvecs files (the TEXMEX layout: per row an int32 dimension, then the
// components). Ours must be run on the same files for the ratio to mean
// anything.
type VectorSet struct {
	// Name is the data set's label in Config ("bge", "random-384").
	Name string
	// Base and Queries are the vector files.
	Base, Queries string
	// Normalize scales rows to unit length before indexing (inner product
	// is then cosine), as compare.py does for SIFT and Fashion-MNIST.
	Normalize bool
}

// Options configure a peer run. Zero fields mean the documented defaults
// (see Defaults), so a caller can fill only what it knows.
type Options struct {
	// Threads are the thread counts measured (faiss OpenMP/OpenBLAS
	// threads, CPython processes); default {1, runtime.NumCPU()}.
	Threads []int
	// Batches are the query batch sizes of flat and hnsw; default {1, 64}.
	Batches []int
	// Duration of one repetition of one measurement (flat/hnsw/programs),
	// and of one step of the serve rate search; default 2 s, Quick 0.5 s.
	Duration time.Duration
	// Reps is the repetitions per measurement; default 3, Quick 1. The serve
	// rate search runs once per repetition.
	Reps int
	// Quick shortens everything (fewer ef values, shorter steps, 1 rep).
	Quick bool

	// Root is the repository root (for .cache/faiss-avx2 and bin/rlsearch);
	// default: the first directory up from the working directory holding
	// this module's go.mod.
	Root string
	// Data is the shared data root; default $RLSEARCH_DATA, else
	// Root/../shared/data.
	Data string
	// WorkDir holds built indexes and scratch files (reused between runs);
	// default os.TempDir()/rlsearch-bench-peers.
	WorkDir string

	// Vectors are the flat/hnsw data sets; default the BEIR bge-base set
	// of Data/vectors.
	Vectors []VectorSet
	// K is the number of hits per query (flat, hnsw); default 10.
	K int
	// M, EFConstruction and EFSearch configure HNSW; defaults 16, 100,
	// {16, 64, 256} ({64} when Quick): faiss's and ours' usual settings.
	M, EFConstruction int
	EFSearch          []int
	// FaissBuilds are the faiss builds measured: BuildDebian, BuildAVX2,
	// and BuildHNSWLib (hnswlib, hnsw suite only);
	// default both, the AVX2 one only when `make bench-setup` built it.
	FaissBuilds []string
	// OMPWaitPolicy for faiss; default "PASSIVE" (idle OpenMP threads sleep
	// instead of spinning: the issue measured spinning threads halving
	// batch-64 flat throughput on this shared machine).
	OMPWaitPolicy string

	// Rlsearch is the rlsearch binary the serve suite starts; default the
	// running executable when it is rlsearch, the rlsearch beside it when
	// it is rlsearch-bench, else Root/bin/rlsearch.
	Rlsearch string
	// Index is a built rlsearch index of Corpus for serve; default one
	// built into WorkDir with `rlsearch index`.
	Index string
	// Corpus and Questions feed the serve suite; defaults
	// Data/wiki_multihop/corpus.jsonl and questions.jsonl.
	Corpus, Questions string
	// Model is the E5 model directory of the serve suite's dense route;
	// default Root/.cache/models/tiny (`make testmodel`) when it exists.
	// Without one the dense route is skipped with a progress line.
	Model string
	// DenseVectors, when set, is the serve suite's passage vectors (a file
	// `rlsearch index --vectors` imports, one row per passage in corpus
	// order) instead of encoding the corpus with Model: for a model too
	// large to encode the corpus on the bench machine (the E5-base-shaped
	// generated model on 2 cores); queries are still encoded by Model.
	DenseVectors string
	// ORTLib is the ONNX Runtime library ours (and the query export)
	// encodes with; default $ONNXRUNTIME_LIB, else
	// Root/.cache/ort/libonnxruntime.so.1 (scripts/setup.sh).
	ORTLib string
	// Serve configures the load of the serve suite.
	Serve ServeOptions
}

// Defaults returns o with every zero field set to its default. It does not
// touch the file system except to find Root.
func (o Options) Defaults() Options {
	if len(o.Threads) == 0 {
		o.Threads = []int{1}
		if n := runtime.NumCPU(); n > 1 {
			o.Threads = append(o.Threads, n)
		}
	}
	if len(o.Batches) == 0 {
		o.Batches = []int{1, 64}
	}
	if o.Duration == 0 {
		o.Duration = 2 * time.Second
		if o.Quick {
			o.Duration = 500 * time.Millisecond
		}
	}
	if o.Reps == 0 {
		o.Reps = 3
		if o.Quick {
			o.Reps = 1
		}
	}
	if o.Root == "" {
		o.Root = findRoot()
	}
	if o.Data == "" {
		o.Data = os.Getenv("RLSEARCH_DATA")
		if o.Data == "" && o.Root != "" {
			o.Data = filepath.Join(o.Root, "..", "shared", "data")
		}
	}
	if o.WorkDir == "" {
		o.WorkDir = filepath.Join(os.TempDir(), "rlsearch-bench-peers")
	}
	if len(o.Vectors) == 0 && o.Data != "" {
		p := filepath.Join(o.Data, "vectors", "beir_bge_base_queries")
		o.Vectors = []VectorSet{{Name: "bge", Base: filepath.Join(p, "base.fvecs"), Queries: filepath.Join(p, "query.fvecs")}}
	}
	if o.K == 0 {
		o.K = 10
	}
	if o.M == 0 {
		o.M = 16
	}
	if o.EFConstruction == 0 {
		o.EFConstruction = 100
	}
	if len(o.EFSearch) == 0 {
		o.EFSearch = []int{16, 64, 256}
		if o.Quick {
			o.EFSearch = []int{64}
		}
	}
	if o.OMPWaitPolicy == "" {
		o.OMPWaitPolicy = "PASSIVE"
	}
	if o.Corpus == "" && o.Data != "" {
		o.Corpus = filepath.Join(o.Data, "wiki_multihop", "corpus.jsonl")
	}
	if o.Questions == "" && o.Data != "" {
		o.Questions = filepath.Join(o.Data, "wiki_multihop", "questions.jsonl")
	}
	if o.Model == "" && o.Root != "" {
		if p := filepath.Join(o.Root, ".cache", "models", "tiny"); fileExists(filepath.Join(p, "model.onnx")) {
			o.Model = p
		}
	}
	if o.ORTLib == "" {
		o.ORTLib = os.Getenv("ONNXRUNTIME_LIB")
		if o.ORTLib == "" && o.Root != "" {
			o.ORTLib = filepath.Join(o.Root, ".cache", "ort", "libonnxruntime.so.1")
		}
	}
	o.Serve = o.Serve.defaults(o.Quick)
	return o
}

// Validate reports the first bad field of o (after Defaults).
func (o Options) Validate() error {
	for _, t := range o.Threads {
		if t < 1 {
			return fmt.Errorf("%w: Threads holds %d (want ≥ 1)", ErrOptions, t)
		}
	}
	for _, b := range o.Batches {
		if b < 1 {
			return fmt.Errorf("%w: Batches holds %d (want ≥ 1)", ErrOptions, b)
		}
	}
	for _, ef := range o.EFSearch {
		if ef < 1 {
			return fmt.Errorf("%w: EFSearch holds %d (want ≥ 1)", ErrOptions, ef)
		}
	}
	for _, b := range o.FaissBuilds {
		if b != BuildDebian && b != BuildAVX2 && b != BuildHNSWLib {
			return fmt.Errorf("%w: FaissBuilds holds %q (want %q, %q or %q)", ErrOptions, b, BuildDebian, BuildAVX2, BuildHNSWLib)
		}
	}
	switch {
	case o.Duration <= 0:
		return fmt.Errorf("%w: Duration %v must be positive", ErrOptions, o.Duration)
	case o.Reps < 1:
		return fmt.Errorf("%w: Reps %d must be ≥ 1", ErrOptions, o.Reps)
	case o.K < 1:
		return fmt.Errorf("%w: K %d must be ≥ 1", ErrOptions, o.K)
	case o.M < 2 || o.EFConstruction < 1:
		return fmt.Errorf("%w: M %d / EFConstruction %d out of range", ErrOptions, o.M, o.EFConstruction)
	}
	return o.Serve.validate()
}

// Run measures the peer(s) of suite and returns their rows, with System set
// to each peer's name and version and Config to the same key ours uses
// (FlatConfig, HNSWConfig, ProgramsConfig, ServeConfig). The serve and
// programs suites also return ours ("rlsearch") measured in the same run
// under the same conditions, since the peer's setup (a server process, a
// stub SDK) decides what ours must be compared with. Progress lines go to
// progress (nil: discarded).
//
// Errors: ErrUnknownSuite; ErrOptions; ErrMissing (wrapped, naming the
// make target) when Available(suite) fails; ErrPeer when a peer process
// fails; ctx's error when cancelled.
func Run(ctx context.Context, suite string, opts Options, progress io.Writer) ([]bench.Row, error) {
	if !slices.Contains(Suites, suite) {
		return nil, fmt.Errorf("%w: %q (peers exist for %s)", ErrUnknownSuite, suite, strings.Join(Suites, ", "))
	}
	if progress == nil {
		progress = io.Discard
	}
	o := opts.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if err := available(suite, o); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.WorkDir, 0o755); err != nil {
		return nil, fmt.Errorf("peers: work dir: %w", err)
	}
	switch suite {
	case "flat", "hnsw":
		return runFaiss(ctx, suite, o, progress)
	case "programs":
		return runPrograms(ctx, o, progress)
	default:
		return runServe(ctx, o, progress)
	}
}

// Available says whether suite's peer can run here with default options;
// the error (ErrMissing, or ErrUnknownSuite) names what is missing and the
// make target that installs it.
func Available(suite string) error {
	if !slices.Contains(Suites, suite) {
		return fmt.Errorf("%w: %q", ErrUnknownSuite, suite)
	}
	return available(suite, Options{}.Defaults())
}

func available(suite string, o Options) error {
	if _, err := os.Stat(Python); err != nil {
		return fmt.Errorf("%w: %s (apt-get install python3; make bench-setup)", ErrMissing, Python)
	}
	switch suite {
	case "flat", "hnsw":
		if err := pyImports(nil, "faiss", "numpy"); err != nil {
			return fmt.Errorf("%w: Debian python3-faiss/python3-numpy (make bench-setup): %v", ErrMissing, err)
		}
		if slices.Contains(o.FaissBuilds, BuildHNSWLib) && !hnswlibAvailable() {
			return fmt.Errorf("%w: Debian python3-hnswlib (apt-get install python3-hnswlib)", ErrMissing)
		}
		if slices.Contains(o.FaissBuilds, BuildAVX2) && !avx2Built(o) {
			return fmt.Errorf("%w: the AVX2 faiss build in %s (make bench-setup, about 7 min on 2 cores)", ErrMissing, avx2Dir(o))
		}
		for _, v := range o.Vectors {
			for _, f := range []string{v.Base, v.Queries} {
				if _, err := os.Stat(f); err != nil {
					return fmt.Errorf("%w: vectors %s: %v (set RLSEARCH_DATA)", ErrMissing, v.Name, err)
				}
			}
		}
	case "programs":
		// CPython alone.
	case "serve":
		if err := pyImports(nil, "fastapi", "uvicorn", "xapian"); err != nil {
			return fmt.Errorf("%w: python3-fastapi python3-uvicorn python3-xapian (make bench-setup): %v", ErrMissing, err)
		}
		for _, f := range []string{o.Corpus, o.Questions} {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("%w: serve input %v (set RLSEARCH_DATA)", ErrMissing, err)
			}
		}
		if _, err := rlsearchBinary(o); err != nil {
			return err
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// pyImports checks that Python imports mods under env (nil: the process's).
func pyImports(env []string, mods ...string) error {
	cmd := exec.Command(Python, "-c", "import "+strings.Join(mods, ", "))
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("%s cannot import %s: %s", Python, strings.Join(mods, ", "), lines[len(lines)-1])
	}
	return nil
}

// findRoot walks up from the working directory to this module's go.mod.
func findRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/rlsearch/rlsearch\n") {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// script writes the embedded script name into dir and returns its path;
// programs_peer.py gets the stub SDK it imports (stubsdk.Python) beside it.
func script(dir, name string) (string, error) {
	b, err := scripts.ReadFile(name)
	if err != nil {
		return "", err
	}
	if name == "searchr1_server.py" { // imports e5_torch from its own directory for --encoder
		e5, err := scripts.ReadFile("e5_torch.py")
		if err != nil {
			return "", err
		}
		if err := writeIfChanged(filepath.Join(dir, "e5_torch.py"), e5); err != nil {
			return "", err
		}
	}
	if name == "programs_peer.py" {
		if err := writeIfChanged(filepath.Join(dir, "stub_sdk.py"), []byte(stubsdk.Python)); err != nil {
			return "", err
		}
	}
	p := filepath.Join(dir, name)
	return p, writeIfChanged(p, b)
}

// writeIfChanged writes b to p (temp + rename) unless p holds b already.
func writeIfChanged(p string, b []byte) error {
	if old, err := os.ReadFile(p); err == nil && string(old) == string(b) {
		return nil
	}
	return bench.WriteFileAtomic(p, b)
}

// runPython runs an embedded script with args under env, streaming its
// stderr lines to progress; the error carries the stderr tail.
func runPython(ctx context.Context, o Options, env []string, progress io.Writer, name string, args ...string) error {
	p, err := script(o.WorkDir, name)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, Python, append([]string{p}, args...)...)
	cmd.Env = env
	tail := &tailWriter{w: progress, max: 4096}
	cmd.Stderr = tail
	cmd.Stdout = tail
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %s %s: %v\n%s", ErrPeer, name, strings.Join(args, " "), err, tail.tail())
	}
	return nil
}

// tailWriter passes writes on and keeps the last max bytes.
type tailWriter struct {
	w   io.Writer
	buf []byte
	max int
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return t.w.Write(p)
}

func (t *tailWriter) tail() string { return string(t.buf) }

// env returns the process environment with kv overriding.
func env(kv ...string) []string {
	out := slices.Clone(os.Environ())
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i] + "="
		out = slices.DeleteFunc(out, func(s string) bool { return strings.HasPrefix(s, k) })
		out = append(out, k+kv[i+1])
	}
	return out
}
