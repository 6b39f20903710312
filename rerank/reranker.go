package rerank

import (
	"cmp"
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
	"sync/atomic"
	"time"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/internal/batch"
	"github.com/rlsearch/rlsearch/internal/canary"
	"github.com/rlsearch/rlsearch/internal/ortenv"
	"github.com/rlsearch/rlsearch/tokenizer"
	"github.com/rlsearch/rlsearch/transformer"
)

// Model directory layout, read by Open:
//
//	model.onnx      the ONNX graph (see Kind* for inputs and outputs), loaded
//	                by path, so external weights (model.onnx.data, needed
//	                above 2 GB) next to it are found
//	tokenizer.json  Hugging Face tokenizer file (Qwen3: byte-level BPE;
//	                cross-encoders: WordPiece)
//	rlsearch.json   ModelConfig
const (
	ModelFile     = "model.onnx"
	TokenizerFile = "tokenizer.json"
	ConfigFile    = "rlsearch.json"
)

// Model kinds (ModelConfig.Kind).
const (
	// KindQwen3 is Qwen3-Reranker: a causal LM with int64 inputs
	// input_ids, attention_mask and optionally position_ids [batch, seq];
	// float32 output logits [batch, seq, vocab] (full) or [batch, vocab] /
	// [batch, 1, vocab] (last position only). Batches are left-padded.
	KindQwen3 = "qwen3-reranker"
	// KindCrossEncoder is a BERT-family sequence classifier: int64 inputs
	// input_ids, attention_mask, token_type_ids [batch, seq]; float32 output
	// logits [batch, labels]. Batches are right-padded.
	KindCrossEncoder = "cross-encoder"
)

// Defaults for Config and ModelConfig fields left zero.
const (
	// DefaultQwen3MaxLength is the Qwen3-Reranker token budget per pair,
	// prompt included: 8192, the max_length of the model card's example.
	DefaultQwen3MaxLength = 8192
	// DefaultCrossMaxLength is the cross-encoder token budget per pair,
	// specials included: 512 (BERT's position table; sentence-transformers
	// CrossEncoder uses the model's max length).
	DefaultCrossMaxLength = 512
	// DefaultInstruction is the Qwen3-Reranker model card's default task.
	DefaultInstruction = "Given a web search query, retrieve relevant passages that answer the query"
	// DefaultBatchSize is the number of pairs per ORT run.
	DefaultBatchSize = 16
	// DefaultBatchWait is how long the batching queue waits for more pairs
	// after the first one arrives.
	DefaultBatchWait = 2 * time.Millisecond
	// DefaultMaxLogitsBytes is Config.MaxLogitsBytes left zero: 1 GiB.
	DefaultMaxLogitsBytes = 1 << 30
	// DefaultMaxBatchTokens is Config.MaxBatchTokens left zero: 8192
	// padded tokens per ORT run, so that one pair at DefaultQwen3MaxLength
	// runs alone (attention memory grows with batch × seq², and a short
	// pair batched with it would be padded to its length) while 16 pairs
	// of up to 512 tokens still share a run.
	DefaultMaxBatchTokens = 8192
)

// Qwen3-Reranker prompt parts, verbatim from the Qwen/Qwen3-Reranker-0.6B
// model card (prefix, suffix and format_instruction).
const (
	Qwen3Prefix = "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n"
	Qwen3Suffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
)

// Errors.
var (
	ErrClosed      = errors.New("rerank: reranker is closed")
	ErrModelConfig = errors.New("rerank: bad model config")
	ErrModel       = errors.New("rerank: model output does not match the config")
	// ErrNonFinite is wrapped by *NonFiniteError: the model scored a pair
	// NaN or ±Inf, which JSON cannot carry and no ranking can place.
	ErrNonFinite = errors.New("rerank: model returned a NaN or infinite score")
)

// NonFiniteError names the pair a model scored NaN or ±Inf. Doc is the
// document's position in the list given to Rerank (RerankLists rewrites
// it to the request's position, documents[Query][Doc]); QueryIndex is -1
// when the caller scored a single query. It wraps ErrNonFinite.
type NonFiniteError struct {
	Model      string
	QueryIndex int
	Query      string
	Doc        int
	DocID      string
	Score      float32
}

func (e *NonFiniteError) Error() string {
	q := "query " + rlsearch.QuoteShort(e.Query)
	d := fmt.Sprintf("document %d", e.Doc)
	if e.QueryIndex >= 0 {
		q = fmt.Sprintf("queries[%d] %s", e.QueryIndex, rlsearch.QuoteShort(e.Query))
		d = fmt.Sprintf("documents[%d][%d]", e.QueryIndex, e.Doc)
	}
	return fmt.Sprintf("rerank: model %s scored %v for %s, %s (id %q): a NaN or infinite score is a model fault (broken export or weights)",
		e.Model, e.Score, q, d, e.DocID)
}

// Unwrap returns ErrNonFinite.
func (e *NonFiniteError) Unwrap() error { return ErrNonFinite }

// checkFinite returns a *NonFiniteError for the first NaN or infinite
// score, nil when all are finite.
func checkFinite(model, query string, docs []rlsearch.Document, scores []float32) error {
	for i, s := range scores {
		if f := float64(s); math.IsNaN(f) || math.IsInf(f, 0) {
			id := ""
			if i < len(docs) {
				id = docs[i].ID
			}
			return &NonFiniteError{Model: model, QueryIndex: -1, Query: query, Doc: i, DocID: id, Score: s}
		}
	}
	return nil
}

// Config configures Open. Zero fields take the documented defaults.
type Config struct {
	// Dir is the model directory (model.onnx, tokenizer.json, rlsearch.json). Required.
	Dir string
	// ORTLib is the ONNX Runtime library (default $ONNXRUNTIME_LIB, else
	// libonnxruntime.so.1 via the dynamic loader). One per process, shared
	// with package embed (internal/ortenv).
	ORTLib string
	// Sessions is the number of ORT sessions, i.e. batches that run at once.
	// Default GOMAXPROCS/2 clamped to [1, 4].
	Sessions int
	// IntraOpThreads per session. Default GOMAXPROCS/Sessions, at least 1.
	IntraOpThreads int
	// MaxLength is the token budget per (query, document) pair, prompt and
	// specials included; documents are truncated to fit (Qwen3: inside the
	// template, so the suffix is never cut). Default rlsearch.json
	// max_length, else 8192 (Qwen3) or 512 (cross-encoder).
	MaxLength int
	// BatchSize is the most pairs per ORT run; concurrent Rerank calls share
	// batches. Default 16.
	BatchSize int
	// MaxBatchTokens caps the padded size of one ORT run, batch size ×
	// longest pair in tokens: the pairs of a batch are sorted by length and
	// cut into runs below it, so a long document runs alone (or with others
	// as long) instead of padding short ones to its length. A pair longer
	// than the cap runs alone. Scores do not depend on it. Default
	// DefaultMaxBatchTokens (8192).
	MaxBatchTokens int
	// BatchWait is how long a batch waits to fill after its first pair
	// arrives. Default 2ms; negative means no waiting (a batch holds what is
	// already queued).
	BatchWait time.Duration
	// MaxLogitsBytes caps the float32 output of one ORT run of a model that
	// returns logits for every position ([batch, seq, vocab]): batches are
	// split so that batch*seq*vocab*4 stays below it, down to one pair per
	// run (one 8,192-token row of Qwen3's 151,669-entry vocabulary alone is
	// 5 GB; export the last-position variant for long documents, see the
	// README). Default DefaultMaxLogitsBytes (1 GiB).
	MaxLogitsBytes int64
	// Instruction replaces the Qwen3 task instruction (default rlsearch.json
	// instruction, else DefaultInstruction).
	Instruction string
	// Provider says where a Qwen3-Reranker runs:
	//   - "cpu" (default): ONNX Runtime on the CPU (model.onnx).
	//   - "gpu" / "gpu:N": package transformer's fp16 forward pass on GPU N
	//     (cuBLAS + kernels/nn.cu; weights from model.safetensors + config.json,
	//     else model.onnx's initializers + config.json), scoring only the
	//     last position's yes/no rows. Open fails with an error wrapping
	//     transformer.ErrNoGPU when that GPU cannot run it, and for
	//     cross-encoders (not implemented on the GPU).
	//   - "auto": "gpu" when GPU 0 can run the model and its model canary
	//     passes, else "cpu"; Placement says which and why. auto never picks
	//     "cuda" (see embed.Config.Provider).
	//   - "cuda" / "cuda:N": ONNX Runtime's CUDA execution provider on GPU N
	//     (model.onnx, fp32 or fp16 export, Qwen3-Reranker or cross-encoder),
	//     with the GPU build of ONNX Runtime 1.29 from `make gpu-setup`
	//     (ORTLib must name .cache/ort-gpu/libonnxruntime.so.1) and the CUDA
	//     13 libraries; Open fails with an error wrapping
	//     ortenv.ErrNoCUDAProvider that names what is missing, never falls
	//     back to the CPU. Sessions left zero is 1 (each session holds the
	//     weights on the GPU).
	// On our GPU forward pass, BatchSize and MaxBatchTokens left zero default
	// to DefaultGPUBatchSize and transformer.DefaultMaxBatchTokens (packed
	// batches carry no padding, so larger batches cost nothing extra).
	//
	// Before a GPU path (gpu, auto's GPU, cuda) serves, Open runs the model
	// canary: canaryPairs scored on it and on the CPU reference (ONNX Runtime
	// on the CPU over model.onnx; without model.onnx or a loadable ONNX
	// Runtime, package transformer's float32 Qwen3 forward pass), every
	// score within canary.MaxScoreDelta (2e-3, relative above 1; the
	// derivation from fp16 rounding is at the constant). On a mismatch
	// "auto" falls back to the CPU with one loud log line and the reason in
	// Placement; "gpu" and "cuda" fail with an error wrapping
	// canary.ErrMismatch that names the first differing pair.
	Provider string
	// SkipCanary turns the model canary off (rlsearch --model-canary=false).
	SkipCanary bool
	// Logf receives notices such as auto's fallback. Default: log.Printf.
	Logf func(format string, args ...any)

	// gpuExec, set by tests, runs the "gpu" provider on this executor (the
	// CPU emulator of kernels/nn.cu) instead of a GPU.
	gpuExec transformer.Executor
	// cudaOnCPU, set by tests, makes provider "cuda" create ONNX Runtime
	// sessions without the CUDA execution provider (the cuda path on a
	// machine without a GPU).
	cudaOnCPU bool
	// outFault, set by tests, corrupts every batch's scores of this
	// reranker (not of its canary reference): a faulty device.
	outFault func(scores []float32)
}

// DefaultGPUBatchSize is Config.BatchSize left zero on the GPU.
const DefaultGPUBatchSize = 64

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("rerank: Config.Dir is empty")
	case c.Sessions < 0:
		return fmt.Errorf("rerank: Config.Sessions %d is negative", c.Sessions)
	case c.IntraOpThreads < 0:
		return fmt.Errorf("rerank: Config.IntraOpThreads %d is negative", c.IntraOpThreads)
	case c.MaxLength < 0 || c.MaxLength > 1<<17:
		return fmt.Errorf("rerank: Config.MaxLength %d outside [0, %d]", c.MaxLength, 1<<17)
	case c.BatchSize < 0 || c.BatchSize > 4096:
		return fmt.Errorf("rerank: Config.BatchSize %d outside [0, 4096]", c.BatchSize)
	case c.MaxBatchTokens < 0:
		return fmt.Errorf("rerank: Config.MaxBatchTokens %d is negative", c.MaxBatchTokens)
	case c.MaxLogitsBytes < 0:
		return fmt.Errorf("rerank: Config.MaxLogitsBytes %d is negative", c.MaxLogitsBytes)
	}
	if _, err := parseCUDA(c.Provider); err != nil {
		return err
	}
	return nil
}

// parseCUDA returns the GPU of "cuda[:N]", -1 for the other providers
// (checked by transformer.ParseDevice).
func parseCUDA(p string) (int, error) {
	bad := fmt.Errorf("rerank: Config.Provider %q is not cpu, gpu, gpu:N, auto, cuda or cuda:N", p)
	switch {
	case p == "cuda":
		return 0, nil
	case strings.HasPrefix(p, "cuda:"):
		n, err := strconv.Atoi(p[len("cuda:"):])
		if err != nil || n < 0 {
			return 0, bad
		}
		return n, nil
	}
	if _, _, err := transformer.ParseDevice(p); err != nil {
		return 0, bad
	}
	return -1, nil
}

// ModelConfig is rlsearch.json of a reranker directory.
type ModelConfig struct {
	// Kind is KindQwen3 or KindCrossEncoder. Required.
	Kind string `json:"kind"`
	// Name identifies the model in logs and /healthz (default: directory name).
	Name string `json:"name"`
	// Inputs are the graph's input names in feed order. Default: Qwen3
	// input_ids, attention_mask; cross-encoder input_ids, attention_mask,
	// token_type_ids. Qwen3 also understands position_ids.
	Inputs []string `json:"inputs"`
	// Output is the logits output name (default "logits").
	Output string `json:"output"`
	// MaxLength is the default Config.MaxLength.
	MaxLength int `json:"max_length"`
	// Instruction is the default Qwen3 instruction.
	Instruction string `json:"instruction"`
	// YesToken and NoToken are the Qwen3 answer tokens (default "yes", "no",
	// as in the model card's convert_tokens_to_ids).
	YesToken string `json:"yes_token"`
	NoToken  string `json:"no_token"`
	// Activation maps cross-encoder logits to a score: "none" (the logit of
	// Label; default), "sigmoid" (of that logit) or "softmax" (probability
	// of class Label).
	Activation string `json:"activation"`
	// Label is the cross-encoder class whose logit is the score (default 0;
	// use 1 with two-class models).
	Label int `json:"label"`
}

// LoadModelConfig reads dir/rlsearch.json and fills defaults; errors wrap
// ErrModelConfig (or the fs error).
func LoadModelConfig(dir string) (ModelConfig, error) {
	var mc ModelConfig
	path := filepath.Join(dir, ConfigFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return mc, fmt.Errorf("rerank: read model config: %w", err)
	}
	if err := json.Unmarshal(data, &mc); err != nil {
		return mc, fmt.Errorf("%w: %s: %v", ErrModelConfig, path, err)
	}
	if mc.Name == "" {
		mc.Name = filepath.Base(filepath.Clean(dir))
	}
	if mc.Output == "" {
		mc.Output = "logits"
	}
	allowed := map[string]bool{"input_ids": true, "attention_mask": true}
	switch mc.Kind {
	case KindQwen3:
		if len(mc.Inputs) == 0 {
			mc.Inputs = []string{"input_ids", "attention_mask"}
		}
		allowed["position_ids"] = true
		mc.YesToken = cmpOr(mc.YesToken, "yes")
		mc.NoToken = cmpOr(mc.NoToken, "no")
	case KindCrossEncoder:
		if len(mc.Inputs) == 0 {
			mc.Inputs = []string{"input_ids", "attention_mask", "token_type_ids"}
		}
		allowed["token_type_ids"] = true
		mc.Activation = cmpOr(mc.Activation, "none")
		if mc.Activation != "none" && mc.Activation != "sigmoid" && mc.Activation != "softmax" {
			return mc, fmt.Errorf("%w: %s: activation %q (want none, sigmoid or softmax)", ErrModelConfig, path, mc.Activation)
		}
		if mc.Label < 0 {
			return mc, fmt.Errorf("%w: %s: label %d is negative", ErrModelConfig, path, mc.Label)
		}
	default:
		return mc, fmt.Errorf("%w: %s: kind %q (want %q or %q)", ErrModelConfig, path, mc.Kind, KindQwen3, KindCrossEncoder)
	}
	seen := map[string]bool{}
	for _, in := range mc.Inputs {
		if !allowed[in] || seen[in] {
			return mc, fmt.Errorf("%w: %s: input %q unknown for kind %s or listed twice", ErrModelConfig, path, in, mc.Kind)
		}
		seen[in] = true
	}
	if !seen["input_ids"] {
		return mc, fmt.Errorf("%w: %s: inputs lack input_ids", ErrModelConfig, path)
	}
	if mc.MaxLength < 0 {
		return mc, fmt.Errorf("%w: %s: max_length %d is negative", ErrModelConfig, path, mc.MaxLength)
	}
	return mc, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Reranker scores (query, document) pairs with a Qwen3-Reranker or a
// cross-encoder ONNX model. It implements rlsearch.Reranker.
//
// A Reranker is safe for concurrent use. Pairs of all concurrent Rerank
// calls go through one queue: an owner goroutine cuts it into batches of at
// most Config.BatchSize pairs (waiting Config.BatchWait for a batch to
// fill), sorts them by length and cuts them into runs of at most
// Config.MaxBatchTokens padded tokens, and Config.Sessions workers, each owning one ORT session, run them.
// One batch costs a fixed handful of cgo calls. Close stops it.
type Reranker struct {
	cfg   Config
	model ModelConfig

	// Qwen3.
	bpe            *tokenizer.BPE
	prefix, suffix []int32
	yesID, noID    int32
	padID          int32
	fullLogits     bool // output has a sequence axis
	vocab          int
	// Cross-encoder.
	wp       *tokenizer.WordPiece
	cls, sep int32
	labels   int

	sessions []*ortenv.Session
	gpu      *transformer.Qwen3GPU // Provider gpu: replaces the sessions
	out16    bool                  // model.onnx's output is float16 (an fp16 export)
	outRank  int                   // rank of the output (2 or 3), from the probe
	provider string                // "cpu", "gpu:N" or "cuda:N"
	reason   string                // why (Placement)
	canary   canary.Report
	runs     atomic.Int64 // model runs so far (tests)
	// onRun, when set before the first Rerank, sees the shape of every
	// batch run (tests).
	onRun   func(batch, seq int)
	queue   chan *pairJob
	work    chan []*pairJob
	quit    chan struct{}
	wg      sync.WaitGroup
	closeMu sync.RWMutex
	closed  bool
}

var _ rlsearch.Reranker = (*Reranker)(nil)

// pairJob is one tokenized pair waiting for its score.
type pairJob struct {
	ctx   context.Context
	ids   []int32
	types []int32 // cross-encoder only
	out   *float32
	logit *[2]float64 // optional: raw logits for tests (Qwen3: no, yes)
	done  chan<- error
}

// Open loads the model directory, starts Config.Sessions ORT sessions and
// probes the model with one short pair (checking the output shape and that
// the answer token ids fit the vocabulary).
func Open(cfg Config) (*Reranker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	userBatch, userTokens := cfg.BatchSize, cfg.MaxBatchTokens
	mc, err := LoadModelConfig(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	procs := runtime.GOMAXPROCS(0)
	cudaDev, _ := parseCUDA(cfg.Provider)
	if cfg.Sessions == 0 {
		cfg.Sessions = min(max(procs/2, 1), 4)
		if cudaDev >= 0 {
			cfg.Sessions = 1
		}
	}
	if cfg.IntraOpThreads == 0 {
		cfg.IntraOpThreads = max(procs/cfg.Sessions, 1)
	}
	cfg.BatchSize = cmp.Or(cfg.BatchSize, DefaultBatchSize)
	cfg.MaxBatchTokens = cmp.Or(cfg.MaxBatchTokens, DefaultMaxBatchTokens)
	cfg.BatchWait = cmp.Or(cfg.BatchWait, DefaultBatchWait)
	cfg.MaxLogitsBytes = cmp.Or(cfg.MaxLogitsBytes, DefaultMaxLogitsBytes)
	cfg.MaxLength = cmp.Or(cfg.MaxLength, mc.MaxLength)
	if cfg.Instruction == "" {
		cfg.Instruction = cmpOr(mc.Instruction, DefaultInstruction)
	}
	cfg.ORTLib = ortenv.Resolve(cfg.ORTLib)
	r := &Reranker{cfg: cfg, model: mc}
	tokPath := filepath.Join(cfg.Dir, TokenizerFile)
	switch mc.Kind {
	case KindQwen3:
		r.cfg.MaxLength = cmp.Or(r.cfg.MaxLength, DefaultQwen3MaxLength)
		if r.bpe, err = tokenizer.LoadBPE(tokPath); err != nil {
			return nil, err
		}
		r.prefix, r.suffix = r.bpe.Encode(Qwen3Prefix), r.bpe.Encode(Qwen3Suffix)
		var ok bool
		if r.yesID, ok = r.bpe.TokenID(mc.YesToken); !ok {
			return nil, fmt.Errorf("%w: yes_token %q is not in %s", ErrModelConfig, mc.YesToken, tokPath)
		}
		if r.noID, ok = r.bpe.TokenID(mc.NoToken); !ok {
			return nil, fmt.Errorf("%w: no_token %q is not in %s", ErrModelConfig, mc.NoToken, tokPath)
		}
		// Qwen3's pad_token is <|endoftext|> (tokenizer_config.json); padded
		// positions are masked, so the id only has to be valid.
		r.padID, _ = r.bpe.TokenID("<|endoftext|>")
		if min := len(r.prefix) + len(r.suffix) + 8; r.cfg.MaxLength < min {
			return nil, fmt.Errorf("rerank: Config.MaxLength %d leaves no room inside the %d-token prompt template (need >= %d)", r.cfg.MaxLength, len(r.prefix)+len(r.suffix), min)
		}
	case KindCrossEncoder:
		r.cfg.MaxLength = cmp.Or(r.cfg.MaxLength, DefaultCrossMaxLength)
		if r.cfg.MaxLength < 3 {
			return nil, fmt.Errorf("rerank: Config.MaxLength %d leaves no room for [CLS] [SEP] [SEP]", r.cfg.MaxLength)
		}
		if r.wp, err = tokenizer.LoadWordPiece(tokPath); err != nil {
			return nil, fmt.Errorf("rerank: %w", err)
		}
		ends := r.wp.Encode("", 0)
		if len(ends) != 2 {
			return nil, fmt.Errorf("%w: %s encodes \"\" to %d ids, want [CLS] [SEP]", ErrModelConfig, tokPath, len(ends))
		}
		r.cls, r.sep, r.padID = ends[0], ends[1], r.wp.PadID()
	}
	r.provider, r.reason = "cpu", "ONNX Runtime on the CPU (provider "+cmpOr(cfg.Provider, "cpu")+")"
	if kind, ordinal, err := transformer.ParseDevice(cfg.Provider); err == nil && kind != "cpu" {
		err := r.openGPU(kind, ordinal)
		if err == nil {
			if userBatch == 0 {
				r.cfg.BatchSize = DefaultGPUBatchSize
			}
			if userTokens == 0 {
				r.cfg.MaxBatchTokens = transformer.DefaultMaxBatchTokens
			}
			r.start([]func([]*pairJob) error{r.runGPU})
			if err = r.runCanary(); err == nil {
				return r, nil
			}
			// Back to the state before openGPU: no queue, no GPU model.
			r.stopQueue()
			r.destroy()
			r.cfg.BatchSize, r.cfg.MaxBatchTokens = cfg.BatchSize, cfg.MaxBatchTokens
		}
		if kind != "auto" {
			return nil, err
		}
		r.provider = "cpu"
		r.reason = "auto: " + strings.TrimPrefix(err.Error(), "rerank: provider auto: ")
		if errors.Is(err, canary.ErrMismatch) {
			cfg.Logf("rerank: MODEL CANARY FAILED, NOT SERVING ON THE GPU: %v; using ONNX Runtime on the CPU", err)
		}
	}
	if err := r.openORT(cudaDev); err != nil {
		return nil, err
	}
	if cudaDev >= 0 {
		if err := r.runCanary(); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// openORT creates the ONNX Runtime sessions (with the CUDA execution
// provider on GPU cudaDev ≥ 0), probes the model and starts the queue.
func (r *Reranker) openORT(cudaDev int) error {
	cfg, mc := r.cfg, r.model
	modelPath := filepath.Join(cfg.Dir, ModelFile)
	if _, err := os.Stat(modelPath); err != nil {
		return fmt.Errorf("rerank: %w", err)
	}
	if err := ortenv.Init(cfg.ORTLib); err != nil {
		if errors.Is(err, ortenv.ErrLibMismatch) {
			return err
		}
		return fmt.Errorf("rerank: %w", err)
	}
	if cudaDev >= 0 {
		r.provider = fmt.Sprintf("cuda:%d", cudaDev)
		r.reason = fmt.Sprintf("ONNX Runtime %s's CUDA execution provider on GPU %d (provider %s, %s)", ortenv.Version(), cudaDev, cfg.Provider, cfg.ORTLib)
		if cfg.cudaOnCPU {
			cudaDev = -1
		}
	}
	if o, err := transformer.ONNXOutputInfo(modelPath, mc.Output); err == nil && o.Elem == "float16" {
		r.out16 = true // an fp16 export: output buffers of float16
		r.outRank = len(o.Dims)
		if len(o.Dims) > 0 {
			r.vocab = int(o.Dims[len(o.Dims)-1])
		}
		if mc.Kind == KindQwen3 && r.outRank == 3 && len(o.Dims) == 3 && o.Dims[1] != 1 {
			r.fullLogits = true
		}
	}
	for range cfg.Sessions {
		s, err := ortenv.NewSession(ortenv.SessionConfig{Path: modelPath, Inputs: mc.Inputs, Outputs: []string{mc.Output}, IntraOp: cfg.IntraOpThreads,
			CUDA: cudaDev >= 0, Device: max(cudaDev, 0)})
		if err != nil {
			r.destroy()
			return fmt.Errorf("rerank: provider %s: create ONNX Runtime session for %s: %w", cmpOr(cfg.Provider, "cpu"), modelPath, err)
		}
		r.sessions = append(r.sessions, s)
	}
	if err := r.probe(); err != nil {
		r.destroy()
		return err
	}
	var runners []func([]*pairJob) error
	for _, s := range r.sessions {
		runners = append(runners, func(jobs []*pairJob) error { return r.runChunked(s, jobs) })
	}
	r.start(runners)
	return nil
}

// start runs the batching queue with one worker per runner.
func (r *Reranker) start(runners []func([]*pairJob) error) {
	r.queue = make(chan *pairJob, 4*r.cfg.BatchSize)
	r.work = make(chan []*pairJob)
	r.quit = make(chan struct{})
	r.wg.Add(1 + len(runners))
	go r.dispatch()
	for _, run := range runners {
		go r.worker(run)
	}
}

// openGPU loads the model on our GPU forward pass (Provider gpu, gpu:N or
// auto) and probes it with one pair.
func (r *Reranker) openGPU(kind string, ordinal int) error {
	p := r.cfg.Provider
	if r.model.Kind != KindQwen3 {
		return fmt.Errorf("rerank: provider %s: %w: the GPU forward pass implements %s, not %s", p, transformer.ErrNoGPU, KindQwen3, r.model.Kind)
	}
	var info cuda.DeviceInfo
	if r.cfg.gpuExec == nil {
		var err error
		if info, err = transformer.ProbeGPU(ordinal); err != nil {
			return fmt.Errorf("rerank: provider %s: %w", p, err)
		}
	}
	tc, err := transformer.LoadConfig(r.cfg.Dir)
	if err != nil {
		return fmt.Errorf("rerank: provider %s: %w", p, err)
	}
	if tc.Qwen3 == nil {
		return fmt.Errorf("rerank: provider %s: %s is model_type %q, not qwen3", p, filepath.Join(r.cfg.Dir, transformer.ConfigFile), tc.ModelType)
	}
	if r.cfg.MaxLength > 65535 {
		return fmt.Errorf("rerank: provider %s: MaxLength %d above the GPU path's 65,535 tokens per pass", p, r.cfg.MaxLength)
	}
	w, err := transformer.LoadWeights(r.cfg.Dir, tc)
	if err != nil {
		return fmt.Errorf("rerank: provider %s: %w", p, err)
	}
	defer w.Close()
	gc := transformer.GPUConfig{Device: ordinal, MaxBatchTokens: min(65535, max(transformer.DefaultMaxBatchTokens, r.cfg.MaxLength))}
	var m *transformer.Qwen3GPU
	if r.cfg.gpuExec != nil {
		m, err = transformer.OpenQwen3GPUOn(*tc.Qwen3, w, [2]int32{r.noID, r.yesID}, gc, r.cfg.gpuExec)
	} else {
		m, err = transformer.OpenQwen3GPU(*tc.Qwen3, w, [2]int32{r.noID, r.yesID}, gc)
	}
	if err != nil {
		return fmt.Errorf("rerank: provider %s: %w", p, err)
	}
	r.gpu, r.vocab, r.provider = m, tc.Qwen3.VocabSize, fmt.Sprintf("gpu:%d", ordinal)
	r.reason = fmt.Sprintf("fp16 forward pass on %s, weights from %s (provider %s)", m.Device(), filepath.Base(w.Source), p)
	if kind == "auto" {
		r.reason = fmt.Sprintf("auto: %s (compute capability %d.%d) is usable; fp16 forward pass, weights from %s", info.Name, info.Major, info.Minor, filepath.Base(w.Source))
	}
	ids, _ := r.encodePair("probe query", "probe document")
	if err := r.runGPU([]*pairJob{{ids: ids, out: new(float32)}}); err != nil {
		m.Close()
		r.gpu = nil
		return fmt.Errorf("rerank: probe of %s on %s: %w", r.model.Name, r.provider, err)
	}
	return nil
}

// runGPU scores one batch on the GPU model: one packed forward pass (or a
// few, above MaxBatchTokens) for all its pairs.
func (r *Reranker) runGPU(jobs []*pairJob) error {
	if len(jobs) == 0 {
		return nil
	}
	ids := make([][]int32, len(jobs))
	seq := 0
	for i, j := range jobs {
		ids[i] = j.ids
		seq = max(seq, len(j.ids))
	}
	r.runs.Add(1)
	if r.onRun != nil {
		r.onRun(len(jobs), seq)
	}
	logits, err := r.gpu.LastLogits(ids)
	if err != nil {
		return fmt.Errorf("rerank: %s on %s, %d pairs: %w", r.model.Name, r.provider, len(jobs), err)
	}
	for i, j := range jobs {
		no, yes := logits[i][0], logits[i][1]
		*j.out = transformer.YesProbability(no, yes)
		if j.logit != nil {
			*j.logit = [2]float64{float64(no), float64(yes)}
		}
	}
	return nil
}

// Provider reports where the model runs: "cpu" (ONNX Runtime) or "gpu:N".
func (r *Reranker) Provider() string { return r.provider }

// Placement reports where the model runs and why (logs, /healthz).
func (r *Reranker) Placement() (device, reason string) { return r.provider, r.reason }

// probe runs one pair and checks the output shape. For cross-encoders the
// pair fills MaxLength, so that a MaxLength beyond the model's position
// table fails here rather than on the first long document (Qwen3 uses
// rotary positions without a table; a full-length probe would only cost
// time and, with full logits, gigabytes).
func (r *Reranker) probe() error {
	doc := "probe document"
	if r.model.Kind == KindCrossEncoder {
		doc = strings.Repeat("a ", r.cfg.MaxLength)
	}
	ids, types := r.encodePair("probe query", doc)
	outputs := []ortenv.Value{nil}
	var ts ortenv.Tensors
	defer ts.Release()
	inputs, err := r.inputs(&ts, []*pairJob{{ids: ids, types: types}}, len(ids))
	if err != nil {
		return fmt.Errorf("rerank: probe %s: %w", r.cfg.Dir, err)
	}
	var shape ortenv.Shape
	if r.out16 {
		// onnxruntime_go copies a float16 output ORT allocated with half
		// its bytes: the buffer is sized from the graph's declared output.
		if r.vocab <= 0 {
			return fmt.Errorf("%w: %s's float16 output %q has no fixed last dimension (vocab or labels)", ErrModel, r.model.Name, r.model.Output)
		}
		shape = r.outShape(1, len(ids))
		o, err := ortenv.NewFloat16Tensor(&ts, shape, make([]uint16, shape.FlattenedSize()))
		if err != nil {
			return fmt.Errorf("rerank: probe %s: %w", r.cfg.Dir, err)
		}
		outputs[0] = o
	}
	if err := r.sessions[0].Run(inputs, outputs); err != nil {
		return fmt.Errorf("rerank: probe run of %s on one %d-token pair (inputs %v, output %q; is MaxLength within the model's positions?): %w",
			filepath.Join(r.cfg.Dir, ModelFile), len(ids), r.model.Inputs, r.model.Output, err)
	}
	if !r.out16 {
		defer outputs[0].Destroy()
		if t := ortenv.ElemType(outputs[0]); t != "float32" {
			return fmt.Errorf("%w: output %q is %v, want float32 or float16", ErrModel, r.model.Output, t)
		}
		shape = outputs[0].GetShape()
	}
	r.outRank = len(shape)
	switch r.model.Kind {
	case KindQwen3:
		switch {
		case len(shape) == 3 && shape[0] == 1 && shape[1] == int64(len(ids)):
			r.fullLogits = true
		case len(shape) == 3 && shape[0] == 1 && shape[1] == 1, len(shape) == 2 && shape[0] == 1:
		default:
			return fmt.Errorf("%w: %s output shape %v for one %d-token pair, want [1, %d, vocab] or [1, vocab]", ErrModel, r.model.Name, shape, len(ids), len(ids))
		}
		r.vocab = int(shape[len(shape)-1])
		if int(r.yesID) >= r.vocab || int(r.noID) >= r.vocab {
			return fmt.Errorf("%w: vocab %d does not hold yes/no ids %d/%d", ErrModel, r.vocab, r.yesID, r.noID)
		}
	case KindCrossEncoder:
		if len(shape) != 2 || shape[0] != 1 || shape[1] < 1 {
			return fmt.Errorf("%w: %s output shape %v, want [1, labels]", ErrModel, r.model.Name, shape)
		}
		r.labels = int(shape[1])
		if r.model.Label >= r.labels {
			return fmt.Errorf("%w: label %d but the model has %d classes", ErrModel, r.model.Label, r.labels)
		}
	}
	return nil
}

// Name is rlsearch.json "name".
func (r *Reranker) Name() string { return r.model.Name }

// Kind is KindQwen3 or KindCrossEncoder.
func (r *Reranker) Kind() string { return r.model.Kind }

// MaxLength is the token budget per pair in effect.
func (r *Reranker) MaxLength() int { return r.cfg.MaxLength }

// Qwen3Prompt returns the model card's prompt for one pair, before
// tokenization and truncation: Qwen3Prefix + "<Instruct>: {instruction}\n
// <Query>: {query}\n<Document>: {doc}" + Qwen3Suffix.
func Qwen3Prompt(instruction, query, doc string) string {
	return Qwen3Prefix + qwen3Body(instruction, query, doc) + Qwen3Suffix
}

func qwen3Body(instruction, query, doc string) string {
	return "<Instruct>: " + instruction + "\n<Query>: " + query + "\n<Document>: " + doc
}

// encodePair tokenizes one pair within MaxLength.
func (r *Reranker) encodePair(query, doc string) (ids, types []int32) {
	if r.model.Kind == KindQwen3 {
		// Model card: prefix, body (tokenized alone and cut to
		// max_length - len(prefix) - len(suffix)), suffix.
		budget := r.cfg.MaxLength - len(r.prefix) - len(r.suffix)
		body := r.bpe.EncodeLimit(qwen3Body(r.cfg.Instruction, query, doc), budget)
		ids = make([]int32, 0, len(r.prefix)+len(body)+len(r.suffix))
		ids = append(append(append(ids, r.prefix...), body...), r.suffix...)
		return ids, nil
	}
	a := r.wp.Encode(query, 0)
	b := r.wp.Encode(doc, 0)
	a, b = a[1:len(a)-1], b[1:len(b)-1]
	na, nb := pairTruncation(len(a), len(b), r.cfg.MaxLength-3)
	a, b = a[:na], b[:nb]
	ids = make([]int32, 0, na+nb+3)
	ids = append(append(append(append(append(ids, r.cls), a...), r.sep), b...), r.sep)
	types = make([]int32, len(ids))
	for i := na + 2; i < len(types); i++ {
		types[i] = 1
	}
	return ids, types
}

// pairTruncation returns how many tokens of each sequence Hugging Face
// tokenizers keeps under strategy longest_first (tokenizers
// src/utils/truncation.rs, "ported from the legacy truncation code").
func pairTruncation(n1, n2, target int) (int, int) {
	if target < 0 {
		target = 0
	}
	if n1+n2 <= target {
		return n1, n2
	}
	swap := n1 > n2
	if swap {
		n1, n2 = n2, n1
	}
	if n1 > target {
		n2 = n1
	} else {
		n2 = max(n1, target-n1)
	}
	if n1+n2 > target {
		n1 = target / 2
		n2 = n1 + target%2
	}
	if swap {
		n1, n2 = n2, n1
	}
	return n1, n2
}

// Rerank scores each document against query and returns one score per
// document, in the order of docs (never reordered; duplicates get their own,
// equal, scores). Qwen3: P(yes) in [0, 1]; cross-encoder: the configured
// logit or probability. The document text is d.Contents (title line
// included). An empty docs gives an empty slice. Every score returned is
// finite: a pair the model scores NaN or ±Inf fails the call with a
// *NonFiniteError (wrapping ErrNonFinite) naming the query and the
// document (position and id). Errors: ctx.Err(), ErrClosed, an ONNX Runtime
// failure, or *NonFiniteError.
func (r *Reranker) Rerank(ctx context.Context, query string, docs []rlsearch.Document) ([]float32, error) {
	pairs := make([]string, len(docs))
	for i, d := range docs {
		pairs[i] = d.Contents
	}
	scores, err := r.score(ctx, query, pairs, nil)
	if err != nil {
		return nil, err
	}
	if err := checkFinite(r.model.Name, query, docs, scores); err != nil {
		return nil, err
	}
	return scores, nil
}

// ScoreIDs scores pre-tokenised Qwen3 prompts (each complete: prefix,
// body and suffix token ids as the model card's template gives them, at
// most MaxLength, ids below the vocabulary) through the same queue and
// model as Rerank, one P(yes) per prompt in order; for benchmarks and
// parity checks that feed fixed token ids (bench/gpu). Bad rows return an
// error wrapping rlsearch.ErrBadInput; cross-encoders are refused (their
// pairs need token types).
func (r *Reranker) ScoreIDs(ctx context.Context, ids [][]int32) ([]float32, error) {
	if r.model.Kind != KindQwen3 {
		return nil, fmt.Errorf("rerank: ScoreIDs needs a %s, %s is a %s: %w", KindQwen3, r.model.Name, r.model.Kind, rlsearch.ErrBadInput)
	}
	vocab := r.vocab
	if vocab <= 0 {
		vocab = r.bpe.VocabSize()
	}
	for i, row := range ids {
		if len(row) == 0 || len(row) > r.cfg.MaxLength {
			return nil, fmt.Errorf("rerank: ids[%d] has %d tokens, want 1..MaxLength %d: %w", i, len(row), r.cfg.MaxLength, rlsearch.ErrBadInput)
		}
		for j, id := range row {
			if id < 0 || int(id) >= vocab {
				return nil, fmt.Errorf("rerank: ids[%d][%d] = %d outside the vocabulary [0, %d): %w", i, j, id, vocab, rlsearch.ErrBadInput)
			}
		}
	}
	return r.scoreJobs(ctx, len(ids), func(i int) *pairJob { return &pairJob{ids: ids[i]} }, nil)
}

// score runs the pairs (query, docs[i]) through the queue; logits, when not
// nil, receives the raw logit pair of each row (Qwen3: no, yes).
func (r *Reranker) score(ctx context.Context, query string, docs []string, logits [][2]float64) ([]float32, error) {
	return r.scoreJobs(ctx, len(docs), func(i int) *pairJob {
		ids, types := r.encodePair(query, docs[i])
		return &pairJob{ids: ids, types: types}
	}, logits)
}

// scoreJobs runs the n jobs that job makes (ids and types set) through the
// queue and returns their scores in order; logits, when not nil, receives
// the raw logit pair of each.
func (r *Reranker) scoreJobs(ctx context.Context, n int, job func(i int) *pairJob, logits [][2]float64) ([]float32, error) {
	out := make([]float32, n)
	if n == 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	jobs := make([]*pairJob, n)
	done := make(chan error, n)
	for i := range n {
		j := job(i)
		j.ctx, j.out, j.done = ctx, &out[i], done
		if logits != nil {
			j.logit = &logits[i]
		}
		jobs[i] = j
	}
	// Neighbours in the queue share a batch: similar lengths pad less.
	order := slices.Clone(jobs)
	slices.SortStableFunc(order, func(a, b *pairJob) int { return len(a.ids) - len(b.ids) })
	r.closeMu.RLock()
	if r.closed {
		r.closeMu.RUnlock()
		return nil, ErrClosed
	}
	sent := 0
	for _, j := range order {
		select {
		case r.queue <- j:
			sent++
			continue
		case <-ctx.Done():
		}
		break
	}
	r.closeMu.RUnlock()
	var firstErr error
	for range sent {
		if err := <-done; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil && sent < len(order) {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// dispatch is the owner goroutine that cuts the queue into batches
// (internal/batch: up to BatchSize pairs, BatchWait after a batch opens)
// and hands them to the workers in runs of at most MaxBatchTokens.
func (r *Reranker) dispatch() {
	defer r.wg.Done()
	defer close(r.work)
	q := batch.New(r.queue, batch.Config[*pairJob]{Max: r.cfg.BatchSize, Wait: r.cfg.BatchWait, Stop: r.quit})
	q.Run(func(jobs []*pairJob) {
		for _, run := range tokenChunks(jobs, r.cfg.MaxBatchTokens) {
			r.work <- run
		}
	})
}

// tokenChunks sorts jobs by length (stable) and cuts them into consecutive
// runs whose padded size, len(run) × its longest pair, is at most budget;
// a pair longer than budget gets a run of its own. Sorting first keeps
// similar lengths together, so a long pair never pads short ones.
func tokenChunks(jobs []*pairJob, budget int) [][]*pairJob {
	slices.SortStableFunc(jobs, func(a, b *pairJob) int { return len(a.ids) - len(b.ids) })
	var out [][]*pairJob
	start := 0
	for i, j := range jobs {
		// Sorted: the longest pair of jobs[start:i+1] is j.
		if i > start && (i+1-start)*len(j.ids) > budget {
			out = append(out, jobs[start:i:i])
			start = i
		}
	}
	if start < len(jobs) {
		out = append(out, jobs[start:])
	}
	return out
}

// worker runs batches with run (its own ORT session, or the GPU model).
func (r *Reranker) worker(run func([]*pairJob) error) {
	defer r.wg.Done()
	for batch := range r.work {
		live := batch[:0:0]
		for _, j := range batch {
			if err := j.ctx.Err(); err != nil {
				j.done <- err
				continue
			}
			live = append(live, j)
		}
		err := run(live)
		if err == nil && r.cfg.outFault != nil {
			scores := make([]float32, len(live))
			for i, j := range live {
				scores[i] = *j.out
			}
			r.cfg.outFault(scores)
			for i, j := range live {
				*j.out = scores[i]
			}
		}
		for _, j := range live {
			j.done <- err
		}
	}
}

// runChunked splits a batch when full-position logits would exceed
// Config.MaxLogitsBytes, then runs each part.
func (r *Reranker) runChunked(s *ortenv.Session, jobs []*pairJob) error {
	for len(jobs) > 0 {
		n := len(jobs)
		if r.fullLogits {
			seq := 0
			for i, j := range jobs {
				seq = max(seq, len(j.ids))
				if int64(i+1)*int64(seq)*int64(r.vocab)*4 > r.cfg.MaxLogitsBytes && i > 0 {
					n = i
					break
				}
			}
		}
		if err := r.run(s, jobs[:n]); err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}

// inputs builds the padded input tensors of one batch in r.model.Inputs
// order: Qwen3 left-padded (position ids 0.. over real tokens, 0 on
// padding), cross-encoders right-padded.
func (r *Reranker) inputs(ts *ortenv.Tensors, jobs []*pairJob, seq int) ([]ortenv.Value, error) {
	b := len(jobs)
	shape := ortenv.NewShape(int64(b), int64(seq))
	ids := make([]int64, b*seq)
	mask := make([]int64, b*seq)
	pos := make([]int64, b*seq)
	types := make([]int64, b*seq)
	left := r.model.Kind == KindQwen3
	for i, j := range jobs {
		off := i * seq
		if left {
			off += seq - len(j.ids)
		}
		for k := range ids[i*seq : (i+1)*seq] {
			ids[i*seq+k] = int64(r.padID)
		}
		for k, id := range j.ids {
			ids[off+k] = int64(id)
			mask[off+k] = 1
			pos[off+k] = int64(k)
			if j.types != nil {
				types[off+k] = int64(j.types[k])
			}
		}
	}
	vals := make([]ortenv.Value, 0, len(r.model.Inputs))
	for _, name := range r.model.Inputs {
		var data []int64
		switch name {
		case "input_ids":
			data = ids
		case "attention_mask":
			data = mask
		case "position_ids":
			data = pos
		case "token_type_ids":
			data = types
		}
		t, err := ortenv.NewTensor(ts, shape, data)
		if err != nil {
			return nil, err
		}
		vals = append(vals, t)
	}
	return vals, nil
}

// run scores one batch (one cgo Run).
func (r *Reranker) run(s *ortenv.Session, jobs []*pairJob) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rerank: batch panicked: %v", p)
		}
	}()
	if len(jobs) == 0 {
		return nil
	}
	seq := 0
	for _, j := range jobs {
		seq = max(seq, len(j.ids))
	}
	r.runs.Add(1)
	if r.onRun != nil {
		r.onRun(len(jobs), seq)
	}
	var ts ortenv.Tensors
	defer ts.Release()
	in, err := r.inputs(&ts, jobs, seq)
	if err != nil {
		return fmt.Errorf("rerank: input tensors: %w", err)
	}
	// ORT writes the output into a Go buffer of the shape the probe found
	// (no copy out of an ORT-allocated tensor).
	shape := r.outShape(len(jobs), seq)
	data := make([]float32, shape.FlattenedSize())
	var out ortenv.Value
	var d16 []uint16
	if r.out16 {
		d16 = make([]uint16, len(data))
		out, err = ortenv.NewFloat16Tensor(&ts, shape, d16)
	} else {
		out, err = ortenv.NewTensor(&ts, shape, data)
	}
	if err != nil {
		return fmt.Errorf("rerank: output tensor: %w", err)
	}
	if err := s.Run(in, []ortenv.Value{out}); err != nil {
		return fmt.Errorf("rerank: run %s on %d pairs of %d tokens: %w", r.model.Name, len(jobs), seq, err)
	}
	for i, h := range d16 {
		data[i] = float16.Frombits(h).Float32()
	}
	if len(shape) < 2 || shape[0] != int64(len(jobs)) {
		return fmt.Errorf("%w: output shape %v for %d pairs", ErrModel, shape, len(jobs))
	}
	if r.model.Kind == KindQwen3 {
		v := int(shape[len(shape)-1])
		rowLen := int(shape.FlattenedSize()) / len(jobs)
		if v != r.vocab || rowLen%v != 0 {
			return fmt.Errorf("%w: output shape %v", ErrModel, shape)
		}
		for i, j := range jobs {
			last := data[i*rowLen+rowLen-v : (i+1)*rowLen] // last position of row i
			no, yes := float64(last[r.noID]), float64(last[r.yesID])
			// softmax over (no, yes), probability of yes.
			*j.out = float32(1 / (1 + math.Exp(no-yes)))
			if j.logit != nil {
				*j.logit = [2]float64{no, yes}
			}
		}
		return nil
	}
	if len(shape) != 2 || int(shape[1]) != r.labels {
		return fmt.Errorf("%w: output shape %v, want [%d, %d]", ErrModel, shape, len(jobs), r.labels)
	}
	for i, j := range jobs {
		row := data[i*r.labels : (i+1)*r.labels]
		x := float64(row[r.model.Label])
		switch r.model.Activation {
		case "sigmoid":
			x = 1 / (1 + math.Exp(-x))
		case "softmax":
			m := float64(slices.Max(row))
			var sum float64
			for _, v := range row {
				sum += math.Exp(float64(v) - m)
			}
			x = math.Exp(x-m) / sum
		}
		*j.out = float32(x)
		if j.logit != nil {
			*j.logit = [2]float64{float64(row[r.model.Label]), 0}
		}
	}
	return nil
}

// outShape is the model's output shape for b pairs of seq tokens, as the
// probe found it: Qwen3 [b, seq, vocab] (full logits), [b, 1, vocab] or
// [b, vocab]; cross-encoders [b, labels].
func (r *Reranker) outShape(b, seq int) ortenv.Shape {
	switch {
	case r.model.Kind == KindCrossEncoder:
		n := r.labels
		if n == 0 { // before the probe (float16 exports): the declared width
			n = r.vocab
		}
		return ortenv.NewShape(int64(b), int64(n))
	case r.fullLogits:
		return ortenv.NewShape(int64(b), int64(seq), int64(r.vocab))
	case r.outRank == 3:
		return ortenv.NewShape(int64(b), 1, int64(r.vocab))
	}
	return ortenv.NewShape(int64(b), int64(r.vocab))
}

// Close stops the queue after the batches in flight and releases the
// sessions. Calls after Close return ErrClosed. Idempotent.
func (r *Reranker) Close() error {
	r.closeMu.Lock()
	if r.closed {
		r.closeMu.Unlock()
		return nil
	}
	r.closed = true
	r.closeMu.Unlock()
	r.stopQueue()
	r.destroy()
	return nil
}

// stopQueue stops the owner and the workers after the batches in flight
// and fails what is still queued with ErrClosed. No sender may be left
// (Close holds them off; Open calls it before anyone else has r).
func (r *Reranker) stopQueue() {
	if r.quit == nil {
		return
	}
	close(r.quit)
	r.wg.Wait()
	for {
		select {
		case j := <-r.queue:
			j.done <- ErrClosed
			continue
		default:
		}
		break
	}
	r.quit = nil
}

func (r *Reranker) destroy() {
	for _, s := range r.sessions {
		s.Destroy()
	}
	r.sessions = nil
	if r.gpu != nil {
		r.gpu.Close()
		r.gpu = nil
	}
}
