package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/x448/float16"
	"golang.org/x/sync/errgroup"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/tokenizer"
	"github.com/rlsearch/rlsearch/transformer"
)

// Model directory layout (E5 style), read by Open:
//
//	model.onnx      BERT-family encoder: int64 inputs [batch, seq] named in
//	                rlsearch.json (input_ids, attention_mask, token_type_ids),
//	                float32 output [batch, seq, dim] (last_hidden_state)
//	tokenizer.json  Hugging Face tokenizer file with a WordPiece model
//	rlsearch.json   ModelConfig
//
// Exporting a real E5 model (needs Python with optimum[exporters]; the
// result runs here unchanged):
//
//	optimum-cli export onnx --model intfloat/e5-base-v2 --task feature-extraction DIR
//	# optimum writes DIR/model.onnx and DIR/tokenizer.json (keep them), then:
//	cat > DIR/rlsearch.json <<'EOF'
//	{"name": "e5-base-v2", "dim": 768, "max_length": 256,
//	 "query_prefix": "query: ", "passage_prefix": "passage: ",
//	 "pooling": "mean", "normalize": true,
//	 "inputs": ["input_ids", "attention_mask", "token_type_ids"],
//	 "output": "last_hidden_state"}
//	EOF
//
// Use dim 384 for e5-small-v2 and 1024 for e5-large-v2. Test models with
// random weights come from scripts/gen_bert.py.

// File names inside a model directory.
const (
	ModelFile     = "model.onnx"
	TokenizerFile = "tokenizer.json"
	ConfigFile    = "rlsearch.json"
)

// Defaults for Config and ModelConfig fields left zero.
const (
	// DefaultMaxLength is the token budget per text, specials and prefix
	// included, when neither Config.MaxLength nor rlsearch.json sets one:
	// 256, the Search-R1 / FlashRAG E5 retrieval setting (E5 itself was
	// trained with 512 for passages).
	DefaultMaxLength = 256
	// DefaultBatchSize is the number of texts per ORT run (Config.BatchSize).
	DefaultBatchSize = 32
	// MaxBatchSize and MaxMaxLength bound Config fields to catch typos
	// (512 is BERT's max_position_embeddings; 8192 leaves room for long-context
	// BERT variants).
	MaxBatchSize = 4096
	MaxMaxLength = 8192
)

// Errors returned by Open and the Encoder methods.
var (
	// ErrClosed is returned by calls on a closed Encoder.
	ErrClosed = errors.New("embed: encoder is closed")
	// ErrDimMismatch is returned by Open when the model's output width
	// differs from rlsearch.json "dim".
	ErrDimMismatch = errors.New("embed: model output dimension does not match rlsearch.json dim")
	// ErrModelConfig marks an invalid or unreadable rlsearch.json.
	ErrModelConfig = errors.New("embed: bad model config")
)

// Config configures Open. Zero fields take the documented defaults.
type Config struct {
	// Dir is the model directory (model.onnx, tokenizer.json, rlsearch.json).
	// Required.
	Dir string
	// ORTLib is the ONNX Runtime shared library. Default: $ONNXRUNTIME_LIB,
	// else "libonnxruntime.so.1" found by the dynamic loader
	// (LD_LIBRARY_PATH, ld.so cache). scripts/setup.sh installs ONNX Runtime
	// 1.30.0 at <repo>/.cache/ort/libonnxruntime.so.1, which a binary cannot
	// locate on its own: export ONNXRUNTIME_LIB. The library is loaded once
	// per process; a later Open naming another library fails with
	// ErrORTLibMismatch.
	ORTLib string
	// Sessions is the number of ORT sessions in the pool, i.e. how many
	// sub-batches run at once (across concurrent calls and within one large
	// call). Each session holds its own copy of the weights (e5-base: ~440 MB).
	// Default: GOMAXPROCS/2 clamped to [1, 4].
	Sessions int
	// IntraOpThreads is ORT's intra-op thread count per session.
	// Default: GOMAXPROCS/Sessions, at least 1, so that the pool fills the CPUs.
	IntraOpThreads int
	// MaxLength is the token budget per text, [CLS], [SEP] and the E5 prefix
	// included; longer texts are truncated. Default: rlsearch.json
	// "max_length", else DefaultMaxLength (256). At most the model's
	// position count (512 for BERT).
	MaxLength int
	// BatchSize is the number of texts per ORT run. Default 32.
	BatchSize int
	// Provider says where the model runs:
	//   - "cpu" (default): ONNX Runtime on the CPU (model.onnx).
	//   - "gpu" / "gpu:N": package transformer's fp16 forward pass on GPU N
	//     (default 0) with cuBLAS and kernels/nn.cu, from model.safetensors +
	//     config.json or from model.onnx's initializers (+ config.json); no
	//     ONNX Runtime. Open fails (errors wrap transformer.ErrNoGPU) when
	//     that GPU cannot run it: no driver or device, compute capability
	//     below 8.0, no cuBLAS, an unsupported model shape.
	//   - "auto": "gpu" when GPU 0 can run the model and its model canary
	//     passes, else "cpu"; the reason is logged through Logf and reported
	//     by Placement. auto never picks "cuda": our forward pass stays the
	//     GPU default until a device measurement says ORT's is faster
	//     (bench/gpu/inference.sh reports which one auto would pick).
	//   - "cuda" / "cuda:N": ONNX Runtime's CUDA execution provider on GPU N
	//     (model.onnx, fp32 or fp16 export), with the GPU build of ONNX
	//     Runtime 1.29 that `make gpu-setup` puts in .cache/ort-gpu (ORTLib
	//     must name it) and the CUDA 13 libraries. Open fails, with an error
	//     wrapping ortenv.ErrNoCUDAProvider that names what is missing (the
	//     provider library, which CUDA 13 library and where it comes from,
	//     the GPU), instead of falling back to the CPU.
	// Encoder.Provider and Encoder.Placement report the outcome.
	//
	// Before a GPU path (gpu, auto's GPU, cuda) serves, Open runs the model
	// canary: a fixed sample of queries and passages (canaryTexts) embedded
	// on it and on the CPU reference (ONNX Runtime on the CPU over
	// model.onnx; without model.onnx or a loadable ONNX Runtime, package
	// transformer's float32 Go forward pass), every embedding within cosine
	// canary.MinCosine (0.999). On a mismatch "auto" falls back to the CPU
	// with one loud log line and the reason in Placement; "gpu" and "cuda"
	// fail with an error wrapping canary.ErrMismatch that names the first
	// differing input. Cost: one batch of the sample on each side, plus
	// opening a one-session CPU reference (Placement gives the seconds).
	Provider string
	// SkipCanary turns the model canary off (rlsearch --model-canary=false),
	// for deployments that measured their GPU path.
	SkipCanary bool
	// Logf receives notices such as auto's fallback. Default: log.Printf.
	Logf func(format string, args ...any)

	// gpuExec, set by tests, runs the "gpu" provider on this executor (the
	// CPU emulator of kernels/nn.cu) instead of a GPU.
	gpuExec transformer.Executor
	// cudaOnCPU, set by tests, makes provider "cuda" create ONNX Runtime
	// sessions without the CUDA execution provider, so that the cuda path
	// (sessions, probe, canary) runs on a machine without a GPU.
	cudaOnCPU bool
	// outFault, set by tests, corrupts every output of this encoder (not of
	// its canary reference): a faulty device.
	outFault func(out []float32, dim int)
}

// Validate reports the first invalid field. Zero values are valid (defaults).
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("embed: Config.Dir is empty")
	case c.Sessions < 0:
		return fmt.Errorf("embed: Config.Sessions %d is negative", c.Sessions)
	case c.IntraOpThreads < 0:
		return fmt.Errorf("embed: Config.IntraOpThreads %d is negative", c.IntraOpThreads)
	case c.MaxLength < 0 || c.MaxLength > MaxMaxLength:
		return fmt.Errorf("embed: Config.MaxLength %d outside [0, %d]", c.MaxLength, MaxMaxLength)
	case c.MaxLength > 0 && c.MaxLength < 2:
		return fmt.Errorf("embed: Config.MaxLength %d leaves no room for [CLS] and [SEP]", c.MaxLength)
	case c.BatchSize < 0 || c.BatchSize > MaxBatchSize:
		return fmt.Errorf("embed: Config.BatchSize %d outside [0, %d]", c.BatchSize, MaxBatchSize)
	}
	if ourGPU(c.Provider) {
		if _, _, err := transformer.ParseDevice(c.Provider); err != nil {
			return fmt.Errorf("embed: Config.Provider %q is not cpu, gpu, gpu:N, auto, cuda or cuda:N", c.Provider)
		}
		return nil
	}
	if _, err := parseProvider(c.Provider); err != nil {
		return err
	}
	return nil
}

// ourGPU reports whether provider p asks for package transformer's GPU
// forward pass ("gpu", "gpu:N", "auto").
func ourGPU(p string) bool { return p == "auto" || p == "gpu" || strings.HasPrefix(p, "gpu:") }

// parseProvider returns the CUDA device of "cuda[:N]", or -1 for the CPU.
func parseProvider(p string) (int, error) {
	switch {
	case p == "" || p == "cpu":
		return -1, nil
	case p == "cuda":
		return 0, nil
	case strings.HasPrefix(p, "cuda:"):
		n, err := strconv.Atoi(p[len("cuda:"):])
		if err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("embed: Config.Provider %q is not cpu, gpu, gpu:N, auto, cuda or cuda:N", p)
}

// withDefaults fills zero fields (MaxLength is resolved in Open, where
// rlsearch.json is known).
func (c Config) withDefaults() Config {
	procs := runtime.GOMAXPROCS(0)
	if c.Sessions == 0 {
		c.Sessions = min(max(procs/2, 1), 4)
	}
	if c.IntraOpThreads == 0 {
		c.IntraOpThreads = max(procs/c.Sessions, 1)
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	c.ORTLib = resolveORTLib(c.ORTLib)
	if c.Logf == nil {
		c.Logf = log.Printf
	}
	return c
}

// ModelConfig is rlsearch.json, the model directory's description of how to
// run the encoder.
type ModelConfig struct {
	// Name identifies the model in logs and /healthz. Default: the
	// directory's base name.
	Name string `json:"name"`
	// Dim is the embedding width (hidden size): 384 e5-small, 768 e5-base,
	// 1024 e5-large. Required; checked against the model at Open.
	Dim int `json:"dim"`
	// MaxLength is the default token budget (see Config.MaxLength).
	MaxLength int `json:"max_length"`
	// QueryPrefix and PassagePrefix are prepended before tokenization:
	// "query: " and "passage: " for E5 (intfloat/e5-base-v2 model card).
	QueryPrefix   string `json:"query_prefix"`
	PassagePrefix string `json:"passage_prefix"`
	// Pooling is "mean" (average of last_hidden_state over the attention
	// mask; E5, default) or "cls" (first token; BGE).
	Pooling string `json:"pooling"`
	// Normalize L2-normalises the pooled vector (default true; the
	// rlsearch.Encoder contract promises unit-length vectors).
	Normalize *bool `json:"normalize"`
	// Inputs are the model's input names in feed order, each one of
	// "input_ids", "attention_mask", "token_type_ids". Default all three.
	Inputs []string `json:"inputs"`
	// Output is the model's output name. Default "last_hidden_state".
	Output string `json:"output"`
}

// LoadModelConfig reads and validates dir/rlsearch.json and fills defaults.
// Errors wrap ErrModelConfig (or the fs error for a missing file).
func LoadModelConfig(dir string) (ModelConfig, error) {
	var mc ModelConfig
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return mc, fmt.Errorf("embed: read model config: %w", err)
	}
	if err := json.Unmarshal(data, &mc); err != nil {
		return mc, fmt.Errorf("%w: %s: %v", ErrModelConfig, path, err)
	}
	if mc.Name == "" {
		mc.Name = filepath.Base(filepath.Clean(dir))
	}
	if mc.Pooling == "" {
		mc.Pooling = "mean"
	}
	if mc.Normalize == nil {
		t := true
		mc.Normalize = &t
	}
	if len(mc.Inputs) == 0 {
		mc.Inputs = []string{inputIDs, inputMask, inputTypes}
	}
	if mc.Output == "" {
		mc.Output = "last_hidden_state"
	}
	switch {
	case mc.Dim <= 0:
		return mc, fmt.Errorf("%w: %s: dim %d must be positive", ErrModelConfig, path, mc.Dim)
	case mc.MaxLength < 0 || mc.MaxLength == 1 || mc.MaxLength > MaxMaxLength:
		return mc, fmt.Errorf("%w: %s: max_length %d outside [2, %d]", ErrModelConfig, path, mc.MaxLength, MaxMaxLength)
	case mc.Pooling != "mean" && mc.Pooling != "cls":
		return mc, fmt.Errorf("%w: %s: pooling %q (want mean or cls)", ErrModelConfig, path, mc.Pooling)
	}
	seen := map[string]bool{}
	for _, in := range mc.Inputs {
		if in != inputIDs && in != inputMask && in != inputTypes {
			return mc, fmt.Errorf("%w: %s: input %q (supported: %s, %s, %s)", ErrModelConfig, path, in, inputIDs, inputMask, inputTypes)
		}
		if seen[in] {
			return mc, fmt.Errorf("%w: %s: input %q listed twice", ErrModelConfig, path, in)
		}
		seen[in] = true
	}
	if !seen[inputIDs] {
		return mc, fmt.Errorf("%w: %s: inputs lack %q", ErrModelConfig, path, inputIDs)
	}
	return mc, nil
}

// Input names understood in ModelConfig.Inputs.
const (
	inputIDs   = "input_ids"
	inputMask  = "attention_mask"
	inputTypes = "token_type_ids"
)

// Encoder embeds texts with a BERT-family ONNX model (E5 and similar):
// prefix, WordPiece tokenization with truncation, length-sorted padded
// sub-batches through ONNX Runtime, mean (or CLS) pooling over the attention
// mask, L2 normalisation.
//
// An Encoder is safe for concurrent use: calls share a pool of
// Config.Sessions ORT sessions (a buffered channel), and one large call
// spreads its sub-batches over the pool. Close waits for calls in flight.
//
// Each sub-batch costs a fixed handful of cgo calls (three input tensors and
// one output tensor over pinned Go buffers, one Run, their release), never one
// per text or token; the output is written by ORT straight into the Go buffer
// that pooling reads.
type Encoder struct {
	cfg   Config // with defaults; MaxLength resolved
	model ModelConfig
	tok   *tokenizer.WordPiece
	norm  bool

	pool     chan *ortenv.Session
	all      []*ortenv.Session
	out16    bool   // model.onnx's output is float16 (an fp16 export)
	provider string // "cpu", "cuda:N" (ORT) or "gpu:N" (ours): where the model runs
	reason   string // why (Placement)
	canary   canary.Report
	gpu      *transformer.BertGPU

	mu     sync.RWMutex // held for reading by calls, for writing by Close
	closed bool
}

var _ rlsearch.Encoder = (*Encoder)(nil)

// Open loads the model directory cfg.Dir: rlsearch.json, tokenizer.json
// (tokenizer.LoadWordPiece) and model.onnx, initialises ONNX Runtime once per process
// (see Config.ORTLib) and creates cfg.Sessions sessions. It then runs one
// MaxLength-token probe through the model. Errors: one wrapping
// ErrDimMismatch when the output width is not rlsearch.json "dim"; one naming
// the model when the probe fails (wrong input or output names, MaxLength
// beyond the model's position table); one naming the library and
// $ONNXRUNTIME_LIB when ONNX Runtime cannot be loaded; one wrapping
// ErrModelConfig or an fs error for a bad directory. Open takes about as long
// as loading the model Sessions times. The caller must Close the Encoder.
func Open(cfg Config) (*Encoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	userSessions := cfg.Sessions
	cfg = cfg.withDefaults()
	mc, err := LoadModelConfig(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if cfg.MaxLength == 0 {
		cfg.MaxLength = mc.MaxLength
	}
	if cfg.MaxLength == 0 {
		cfg.MaxLength = DefaultMaxLength
	}
	tok, err := tokenizer.LoadWordPiece(filepath.Join(cfg.Dir, TokenizerFile))
	if err != nil {
		return nil, fmt.Errorf("embed: open %s: %w", cfg.Dir, err)
	}
	var autoWhy string
	var autoCanary canary.Report
	if ourGPU(cfg.Provider) {
		e, err := openGPU(cfg, mc, tok)
		if err == nil {
			if err = e.runCanary(); err == nil {
				return e, nil
			}
			autoCanary = e.canary
			e.Close()
		}
		if cfg.Provider != "auto" {
			return nil, err
		}
		autoWhy = "auto: " + strings.TrimPrefix(err.Error(), "embed: provider auto: ")
		if errors.Is(err, canary.ErrMismatch) {
			cfg.Logf("embed: MODEL CANARY FAILED, NOT SERVING ON THE GPU: %v; using ONNX Runtime on the CPU", err)
		} else {
			cfg.Logf("embed: %s: using ONNX Runtime on the CPU", autoWhy)
		}
		cfg.Provider = "cpu"
	}
	modelPath := filepath.Join(cfg.Dir, ModelFile)
	onnxData, err := os.ReadFile(modelPath)
	if err != nil {
		return nil, fmt.Errorf("embed: read model: %w", err)
	}
	if err := initORT(cfg.ORTLib); err != nil {
		return nil, err
	}
	cudaDev, _ := parseProvider(cfg.Provider)
	if cudaDev >= 0 && userSessions == 0 {
		// Each session holds the weights on the GPU; two let host work
		// (tokens in, pooling out) overlap the other's forward pass.
		cfg.Sessions = 2
	}
	e := &Encoder{
		cfg:    cfg,
		model:  mc,
		tok:    tok,
		norm:   *mc.Normalize,
		pool:   make(chan *ortenv.Session, cfg.Sessions),
		canary: autoCanary,
	}
	e.provider = "cpu"
	e.reason = cmpOr(autoWhy, "ONNX Runtime on the CPU (provider "+cmpOr(cfg.Provider, "cpu")+")")
	if cudaDev >= 0 {
		e.provider = fmt.Sprintf("cuda:%d", cudaDev)
		e.reason = fmt.Sprintf("ONNX Runtime %s's CUDA execution provider on GPU %d (provider %s, %s)", ortenv.Version(), cudaDev, cfg.Provider, cfg.ORTLib)
		if cfg.cudaOnCPU {
			cudaDev = -1
		}
	}
	for len(e.all) < cfg.Sessions {
		s, err := newSession(onnxData, mc.Inputs, mc.Output, cfg.IntraOpThreads, cudaDev)
		if err != nil {
			e.destroySessions()
			return nil, fmt.Errorf("embed: provider %s: create ONNX Runtime session for %s: %w", cmpOr(cfg.Provider, "cpu"), modelPath, err)
		}
		e.all = append(e.all, s)
		e.pool <- s
	}
	if o, err := transformer.ONNXOutputInfo(modelPath, mc.Output); err == nil && o.Elem == "float16" {
		e.out16 = true // an fp16 export: output buffers of float16
	}
	if err := e.probe(); err != nil {
		e.destroySessions()
		return nil, err
	}
	if e.provider != "cpu" {
		if err := e.runCanary(); err != nil {
			e.destroySessions()
			return nil, err
		}
	}
	return e, nil
}

// probe runs one text of exactly MaxLength tokens ([CLS] a a ... [SEP])
// through the model with an ORT-allocated output and checks its shape against
// the configured dim. A MaxLength beyond the model's position table fails
// here, at Open, instead of on the first long text.
func (e *Encoder) probe() error {
	ids := e.tok.Encode(strings.Repeat("a ", e.cfg.MaxLength), e.cfg.MaxLength)
	if len(ids) == 0 {
		return fmt.Errorf("embed: tokenizer %s encodes %q to nothing", filepath.Join(e.cfg.Dir, TokenizerFile), "a")
	}
	var ts ortenv.Tensors
	defer ts.Release()
	inputs, err := e.inputTensors(&ts, [][]int32{ids}, len(ids))
	if err != nil {
		return fmt.Errorf("embed: probe %s: %w", e.cfg.Dir, err)
	}
	outputs := []ortenv.Value{nil}
	if e.out16 {
		// onnxruntime_go copies a float16 output ORT allocated with half
		// its bytes: give it a buffer of the expected shape instead.
		o, err := ortenv.NewFloat16Tensor(&ts, ortenv.NewShape(1, int64(len(ids)), int64(e.model.Dim)), make([]uint16, len(ids)*e.model.Dim))
		if err != nil {
			return fmt.Errorf("embed: probe %s: %w", e.cfg.Dir, err)
		}
		if err := e.all[0].Run(inputs, []ortenv.Value{o}); err != nil {
			return fmt.Errorf("embed: probe run of %s on one %d-token text into a float16 output %q of shape [1, %d, %d] (rlsearch.json dim): %w",
				filepath.Join(e.cfg.Dir, ModelFile), len(ids), e.model.Output, len(ids), e.model.Dim, err)
		}
		return nil
	}
	if err := e.all[0].Run(inputs, outputs); err != nil {
		return fmt.Errorf("embed: probe run of %s on one %d-token text (inputs %v, output %q; is MaxLength within the model's positions?): %w",
			filepath.Join(e.cfg.Dir, ModelFile), len(ids), e.model.Inputs, e.model.Output, err)
	}
	defer outputs[0].Destroy()
	shape := outputs[0].GetShape()
	want := ortenv.NewShape(1, int64(len(ids)), int64(e.model.Dim))
	if !shape.Equals(want) {
		return fmt.Errorf("%w: %s output %q has shape %v for one %d-token text, want %v",
			ErrDimMismatch, filepath.Join(e.cfg.Dir, ModelFile), e.model.Output, shape, len(ids), want)
	}
	if t := ortenv.ElemType(outputs[0]); t != "float32" {
		return fmt.Errorf("embed: %s output %q is %s, want float32 or float16", filepath.Join(e.cfg.Dir, ModelFile), e.model.Output, t)
	}
	return nil
}

// Dim is the embedding width (rlsearch.json "dim").
func (e *Encoder) Dim() int { return e.model.Dim }

// Name is rlsearch.json "name" (default: the directory's base name).
func (e *Encoder) Name() string { return e.model.Name }

// MaxLength is the token budget per text in effect (specials and prefix included).
func (e *Encoder) MaxLength() int { return e.cfg.MaxLength }

// ModelConfig returns the model directory's rlsearch.json with defaults filled.
func (e *Encoder) ModelConfig() ModelConfig { return e.model }

// EncodeQueries embeds queries with ModelConfig.QueryPrefix ("query: " for
// E5). It returns row-major [len(texts), Dim()] float32 owned by the caller,
// rows in the order of texts, unit length when normalize is on. An empty or
// whitespace-only text (strings.TrimSpace) yields a zero row without running
// the model. Texts are truncated to MaxLength tokens. Errors: ctx.Err() when
// ctx ends (checked between sub-batches), ErrClosed, ORT failures.
// Safe for concurrent use.
func (e *Encoder) EncodeQueries(ctx context.Context, texts []string) ([]float32, error) {
	return e.encodeTexts(ctx, texts, e.model.QueryPrefix)
}

// EncodePassages embeds passages with ModelConfig.PassagePrefix ("passage: "
// for E5); otherwise as EncodeQueries. Corpus passages are passed whole
// (Document.Contents, `"Title"\ntext`), as Search-R1 and FlashRAG index them.
func (e *Encoder) EncodePassages(ctx context.Context, texts []string) ([]float32, error) {
	return e.encodeTexts(ctx, texts, e.model.PassagePrefix)
}

// EmbedIDs embeds pre-tokenised texts: ids[i] is one complete sequence
// ([CLS] ... [SEP], prefix included; no padding), at most MaxLength long,
// every id in [0, VocabSize). An empty row yields a zero vector. Output and
// pooling as EncodeQueries. Bad rows return an error wrapping
// rlsearch.ErrBadInput. ids is only read. Safe for concurrent use.
func (e *Encoder) EmbedIDs(ctx context.Context, ids [][]int32) ([]float32, error) {
	vocab := e.tok.VocabSize()
	for i, row := range ids {
		if len(row) > e.cfg.MaxLength {
			return nil, fmt.Errorf("embed: ids[%d] has %d tokens, more than MaxLength %d: %w", i, len(row), e.cfg.MaxLength, rlsearch.ErrBadInput)
		}
		for j, id := range row {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("embed: ids[%d][%d] = %d outside the vocabulary [0, %d): %w", i, j, id, vocab, rlsearch.ErrBadInput)
			}
		}
	}
	return e.embed(ctx, ids)
}

// Tokenize returns the ids the encoder feeds the model for text with prefix
// (the query or passage prefix), truncated to MaxLength; nil for an empty or
// whitespace-only text.
func (e *Encoder) Tokenize(prefix, text string) []int32 {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return e.tok.Encode(prefix+text, e.cfg.MaxLength)
}

// tokenizeParallelMin is the batch size from which tokenization is spread
// over GOMAXPROCS goroutines.
const tokenizeParallelMin = 64

func (e *Encoder) encodeTexts(ctx context.Context, texts []string, prefix string) ([]float32, error) {
	ids := make([][]int32, len(texts))
	workers := 1
	if len(texts) >= tokenizeParallelMin {
		workers = min(runtime.GOMAXPROCS(0), len(texts)/(tokenizeParallelMin/2))
	}
	if workers <= 1 {
		for i, t := range texts {
			ids[i] = e.Tokenize(prefix, t)
		}
	} else {
		var wg sync.WaitGroup
		per := (len(texts) + workers - 1) / workers
		for lo := 0; lo < len(texts); lo += per {
			hi := min(lo+per, len(texts))
			wg.Go(func() {
				for i := lo; i < hi; i++ {
					ids[i] = e.Tokenize(prefix, texts[i])
				}
			})
		}
		wg.Wait()
	}
	return e.embed(ctx, ids)
}

// embed runs the non-empty rows of ids through the model in length-sorted
// sub-batches of BatchSize, spread over the session pool, and pools them
// into the returned [len(ids), Dim()] matrix.
func (e *Encoder) embed(ctx context.Context, ids [][]int32) ([]float32, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := e.embedOn(ctx, ids)
	if err == nil && e.cfg.outFault != nil {
		e.cfg.outFault(out, e.model.Dim)
	}
	return out, err
}

// embedOn runs embed's work on the GPU model or the session pool.
func (e *Encoder) embedOn(ctx context.Context, ids [][]int32) ([]float32, error) {
	dim := e.model.Dim
	if e.gpu != nil {
		out, err := e.gpu.Embed(ids, transformer.Pooling{CLS: e.model.Pooling == "cls", Normalize: e.norm})
		if err != nil {
			return nil, fmt.Errorf("embed: %s on %s: %w", e.model.Name, e.provider, err)
		}
		return out, ctx.Err()
	}
	out := make([]float32, len(ids)*dim)

	order := make([]int, 0, len(ids))
	for i, row := range ids {
		if len(row) > 0 {
			order = append(order, i)
		}
	}
	// Sorting by length keeps similar lengths together, so sub-batches pad
	// little; stable so that the batch composition is deterministic.
	slices.SortStableFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })
	var chunks [][]int
	for lo := 0; lo < len(order); lo += e.cfg.BatchSize {
		chunks = append(chunks, order[lo:min(lo+e.cfg.BatchSize, len(order))])
	}
	if len(chunks) == 0 {
		return out, nil
	}

	// One chunk per pooled session at a time; the first error cancels the rest.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(min(e.cfg.Sessions, len(chunks)))
	for _, chunk := range chunks {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			var s *ortenv.Session
			select {
			case s = <-e.pool:
			case <-gctx.Done():
				return nil
			}
			err := e.runChunk(s, ids, chunk, out)
			e.pool <- s
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		// The parent context ended (ours is only cancelled by an error).
		return nil, err
	}
	return out, nil
}

// inputTensors builds the model inputs for rows right-padded to seq: ids
// padded with PadID, attention mask 1 on tokens and 0 on padding, token
// types 0 (single segment).
func (e *Encoder) inputTensors(ts *ortenv.Tensors, rows [][]int32, seq int) ([]ortenv.Value, error) {
	n := len(rows) * seq
	shape := ortenv.NewShape(int64(len(rows)), int64(seq))
	inputs := make([]ortenv.Value, len(e.model.Inputs))
	for k, name := range e.model.Inputs {
		buf := make([]int64, n)
		switch name {
		case inputIDs:
			pad := int64(e.tok.PadID())
			for b, row := range rows {
				dst := buf[b*seq : (b+1)*seq]
				for t, id := range row {
					dst[t] = int64(id)
				}
				for t := len(row); t < seq; t++ {
					dst[t] = pad
				}
			}
		case inputMask:
			for b, row := range rows {
				for t := range row {
					buf[b*seq+t] = 1
				}
			}
		case inputTypes:
			// all zero
		}
		v, err := ortenv.NewTensor(ts, shape, buf)
		if err != nil {
			return nil, err
		}
		inputs[k] = v
	}
	return inputs, nil
}

// runChunk runs the rows ids[chunk[i]] through session s in one ORT call
// and writes their pooled, normalised vectors to out rows chunk[i].
func (e *Encoder) runChunk(s *ortenv.Session, ids [][]int32, chunk []int, out []float32) error {
	rows := make([][]int32, len(chunk))
	seq := 0
	for i, r := range chunk {
		rows[i] = ids[r]
		seq = max(seq, len(ids[r]))
	}
	dim := e.model.Dim
	var ts ortenv.Tensors
	defer ts.Release()
	inputs, err := e.inputTensors(&ts, rows, seq)
	if err != nil {
		return fmt.Errorf("embed: create input tensors: %w", err)
	}
	hidden := make([]float32, len(rows)*seq*dim)
	shape := ortenv.NewShape(int64(len(rows)), int64(seq), int64(dim))
	var outT ortenv.Value
	var h16 []uint16
	if e.out16 {
		h16 = make([]uint16, len(hidden))
		outT, err = ortenv.NewFloat16Tensor(&ts, shape, h16)
	} else {
		outT, err = ortenv.NewTensor(&ts, shape, hidden)
	}
	if err != nil {
		return fmt.Errorf("embed: create output tensor: %w", err)
	}
	if err := s.Run(inputs, []ortenv.Value{outT}); err != nil {
		return fmt.Errorf("embed: run %s on [%d, %d]: %w", e.model.Name, len(rows), seq, err)
	}
	for i, h := range h16 {
		hidden[i] = float16.Frombits(h).Float32()
	}
	acc := make([]float64, dim)
	for i, row := range rows {
		h := hidden[i*seq*dim : (i+1)*seq*dim]
		clear(acc)
		switch e.model.Pooling {
		case "cls":
			for d := range dim {
				acc[d] = float64(h[d])
			}
		default: // mean over the attended (non-padding) positions
			for t := range row {
				for d, v := range h[t*dim : (t+1)*dim] {
					acc[d] += float64(v)
				}
			}
			inv := 1 / float64(len(row))
			for d := range acc {
				acc[d] *= inv
			}
		}
		scale := 1.0
		if e.norm {
			var ss float64
			for _, v := range acc {
				ss += v * v
			}
			if ss > 0 {
				scale = 1 / math.Sqrt(ss)
			}
		}
		dst := out[chunk[i]*dim : (chunk[i]+1)*dim]
		for d, v := range acc {
			dst[d] = float32(v * scale)
		}
	}
	return nil
}

// Close destroys the ORT sessions after the calls in flight return; later
// calls return ErrClosed. The process-wide ORT environment stays loaded.
// Close is idempotent and safe for concurrent use.
func (e *Encoder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	if e.gpu != nil {
		return e.gpu.Close()
	}
	return e.destroySessions()
}

func (e *Encoder) destroySessions() error {
	var errs []error
	for _, s := range e.all {
		if err := s.Destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	e.all = nil
	return errors.Join(errs...)
}

// Provider reports where the model runs: "cpu" or "cuda:N" (ONNX
// Runtime), or "gpu:N" (package transformer; see Config.Provider).
func (e *Encoder) Provider() string { return e.provider }

// Placement reports where the model runs (Provider) and why, for logs and
// /healthz: the provider asked for, the GPU's name, why "auto" ended on
// the CPU, and the model canary's outcome.
func (e *Encoder) Placement() (device, reason string) { return e.provider, e.reason }

// CanaryReport is the startup model canary's outcome (Config.Provider):
// Ran false on the CPU or when skipped; after auto fell back to the CPU,
// the failed GPU canary.
func (e *Encoder) CanaryReport() canary.Report { return e.canary }

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// openGPU opens the encoder on our GPU forward pass (Config.Provider gpu,
// gpu:N or auto): config.json and the weights (model.safetensors, else
// model.onnx's initializers) of cfg.Dir uploaded in fp16, then one
// MaxLength-token probe.
func openGPU(cfg Config, mc ModelConfig, tok *tokenizer.WordPiece) (*Encoder, error) {
	kind, ordinal, err := transformer.ParseDevice(cfg.Provider)
	if err != nil {
		return nil, err
	}
	var info cuda.DeviceInfo
	if cfg.gpuExec == nil {
		if info, err = transformer.ProbeGPU(ordinal); err != nil {
			return nil, fmt.Errorf("embed: provider %s: %w", cfg.Provider, err)
		}
	}
	tc, err := transformer.LoadConfig(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("embed: provider %s: %w", cfg.Provider, err)
	}
	if tc.Bert == nil {
		return nil, fmt.Errorf("embed: provider %s: %s is model_type %q, not bert", cfg.Provider, filepath.Join(cfg.Dir, transformer.ConfigFile), tc.ModelType)
	}
	if tc.Bert.Hidden != mc.Dim {
		return nil, fmt.Errorf("%w: config.json hidden_size %d, rlsearch.json dim %d", ErrDimMismatch, tc.Bert.Hidden, mc.Dim)
	}
	if cfg.MaxLength > tc.Bert.MaxPositions {
		return nil, fmt.Errorf("embed: MaxLength %d exceeds the model's %d positions (config.json max_position_embeddings)", cfg.MaxLength, tc.Bert.MaxPositions)
	}
	if v := tok.VocabSize(); v > tc.Bert.VocabSize {
		return nil, fmt.Errorf("embed: tokenizer has %d ids, config.json vocab_size %d", v, tc.Bert.VocabSize)
	}
	w, err := transformer.LoadWeights(cfg.Dir, tc)
	if err != nil {
		return nil, fmt.Errorf("embed: provider %s: %w", cfg.Provider, err)
	}
	defer w.Close()
	gc := transformer.GPUConfig{Device: ordinal}
	var m *transformer.BertGPU
	if cfg.gpuExec != nil {
		m, err = transformer.OpenBertGPUOn(*tc.Bert, w, gc, cfg.gpuExec)
	} else {
		m, err = transformer.OpenBertGPU(*tc.Bert, w, gc)
	}
	if err != nil {
		return nil, fmt.Errorf("embed: provider %s: %w", cfg.Provider, err)
	}
	e := &Encoder{cfg: cfg, model: mc, tok: tok, norm: *mc.Normalize, gpu: m, provider: fmt.Sprintf("gpu:%d", ordinal)}
	e.reason = fmt.Sprintf("fp16 forward pass on %s, weights from %s (provider %s)", m.Device(), filepath.Base(w.Source), cfg.Provider)
	if kind == "auto" {
		e.reason = fmt.Sprintf("auto: %s (compute capability %d.%d) is usable; fp16 forward pass, weights from %s", info.Name, info.Major, info.Minor, filepath.Base(w.Source))
	}
	ids := tok.Encode(strings.Repeat("a ", cfg.MaxLength), cfg.MaxLength)
	v, err := m.Embed([][]int32{ids}, transformer.Pooling{Normalize: true})
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("embed: probe of %s on %s (one %d-token text): %w", mc.Name, e.provider, len(ids), err)
	}
	if len(v) != mc.Dim {
		m.Close()
		return nil, fmt.Errorf("%w: probe gave %d values", ErrDimMismatch, len(v))
	}
	return e, nil
}
