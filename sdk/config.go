package sdk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/rlsearch/rlsearch"
)

// Default budgets and limits. The paper's values (RPL, Section 3 and
// Appendix B: at most 20 printed documents, a 2,048-token observation, the
// width ladder topping at 50, RRF k = 60 after Cormack et al. 2009) are
// marked; the others are this package's choices, sized so that a typical
// program (a few calls, a fuse, a rerank, a print) uses well under 1% of
// them.
const (
	DefaultMaxSteps             = 1_000_000        // Starlark execution steps (≈ 20–50 ms of pure computation)
	DefaultTimeout              = 10 * time.Second // wall clock per program, retrieval included
	DefaultMaxCalls             = 16               // retrieval calls per program (the typed maximum is 4 queries × 2 routes = 8)
	DefaultMaxCandidates        = 1000             // documents returned by all retrieval calls of a program
	DefaultMaxWidth             = 50               // k of one retrieval call (RPL width ladder maximum)
	DefaultMaxRerankDocs        = 400              // documents given to one rerank call (8 calls × 50)
	DefaultMaxPrintedDocs       = 20               // documents printed per program (RPL)
	DefaultMaxObservationTokens = 2048             // observation cap in policy tokens (RPL)
	DefaultMaxObservationBytes  = 256 << 10        // observation cap in bytes, checked before counting tokens
	DefaultMaxSourceBytes       = 64 << 10         // program source size
	DefaultMaxQueryBytes        = 2048             // one query string
	DefaultRRFK                 = 60               // reciprocal rank fusion constant (Cormack et al. 2009; RPL)
	DefaultMaxHeapBytes         = 2 << 30          // process heap growth while a program runs above which it is stopped (backstop)
	// DefaultMaxMemoryBytes bounds the bytes charged to one program
	// (meter.go). 64 MiB is ~60× what a retrieval program holds (1,000
	// candidates of ~1 KB, a 256 KiB observation); it keeps the 2×GOMAXPROCS
	// concurrent programs of a 2-core server under 256 MiB, and it bounds
	// the largest single copy, a non-preemptible memmove that can hold up
	// the collector's stop-the-world (and so every request) while it runs.
	DefaultMaxMemoryBytes = 64 << 20
	// DefaultDocFormat is Search-R1's _passages2string line
	// (search_r1/llm_agent/generation.py): the title line as stored, in
	// its double quotes, so that a <code> observation shows a passage
	// exactly as a <search> observation does.
	DefaultDocFormat   = "Doc {index}(Title: {title_line}) {text}\n"
	DefaultErrorFormat = "Error ({code}): {message}\n"
)

// Budgets bound one program. Zero fields mean the defaults above. A request
// may lower the runtime's budgets but never raise them (see Budgets.Within).
// Every count is per program, over the whole of its execution.
type Budgets struct {
	// MaxSteps is the Starlark execution steps (DefaultMaxSteps).
	MaxSteps uint64 `json:"max_steps,omitempty"`
	// Timeout is the wall-clock limit, retrieval and reranking included,
	// from when the program starts executing (DefaultTimeout). TimeoutMS
	// is the same budget in milliseconds, its JSON form ("timeout_ms"):
	// set either; when both are set, Timeout wins. With defaults applied
	// (Runtime.Config, Within) both hold the same value.
	Timeout   time.Duration `json:"-"`
	TimeoutMS int64         `json:"timeout_ms,omitempty"`
	// MaxCalls is the retrieval calls (dense, sparse) a program may make
	// (DefaultMaxCalls); the call over it fails before reaching the
	// retriever.
	MaxCalls int `json:"max_calls,omitempty"`
	// MaxCandidates is the documents all retrieval calls may return
	// together (DefaultMaxCandidates).
	MaxCandidates int `json:"max_candidates,omitempty"`
	// MaxWidth is the largest k of one retrieval call (DefaultMaxWidth,
	// the RPL width ladder's top).
	MaxWidth int `json:"max_width,omitempty"`
	// MaxRerankDocs is the documents one rerank call may score
	// (DefaultMaxRerankDocs).
	MaxRerankDocs int `json:"max_rerank_docs,omitempty"`
	// MaxPrintedDocs is the documents the program may print, over all its
	// print calls (DefaultMaxPrintedDocs, RPL).
	MaxPrintedDocs int `json:"max_printed_docs,omitempty"`
	// MaxObservationTokens caps the observation in policy tokens, as
	// Config.Tokens counts them (DefaultMaxObservationTokens, RPL).
	MaxObservationTokens int `json:"max_observation_tokens,omitempty"`
	// MaxSourceBytes bounds the program source (DefaultMaxSourceBytes).
	MaxSourceBytes int `json:"max_source_bytes,omitempty"`
	// MaxMemoryBytes bounds the bytes charged to the program: an upper
	// estimate of everything its operations allocate, checked before each
	// operation runs (see meter.go). 0 means DefaultMaxMemoryBytes.
	MaxMemoryBytes int64 `json:"max_memory_bytes,omitempty"`
}

// timeout is the wall-clock budget b states: Timeout, else TimeoutMS
// milliseconds (0 when neither is set). The one reading of the two forms.
func (b Budgets) timeout() time.Duration {
	if b.Timeout == 0 && b.TimeoutMS > 0 {
		return time.Duration(b.TimeoutMS) * time.Millisecond
	}
	return b.Timeout
}

// withTimeout returns b with both forms of the time budget set to d. The
// one writing of the two forms.
func (b Budgets) withTimeout(d time.Duration) Budgets {
	b.Timeout, b.TimeoutMS = d, d.Milliseconds()
	return b
}

// Validate reports the first negative field.
func (b Budgets) Validate() error {
	switch {
	case b.Timeout < 0:
		return fmt.Errorf("sdk: Budgets.Timeout %v is negative", b.Timeout)
	case b.TimeoutMS < 0:
		return fmt.Errorf("sdk: Budgets.TimeoutMS %d is negative", b.TimeoutMS)
	case b.MaxCalls < 0:
		return fmt.Errorf("sdk: Budgets.MaxCalls %d is negative", b.MaxCalls)
	case b.MaxCandidates < 0:
		return fmt.Errorf("sdk: Budgets.MaxCandidates %d is negative", b.MaxCandidates)
	case b.MaxWidth < 0:
		return fmt.Errorf("sdk: Budgets.MaxWidth %d is negative", b.MaxWidth)
	case b.MaxRerankDocs < 0:
		return fmt.Errorf("sdk: Budgets.MaxRerankDocs %d is negative", b.MaxRerankDocs)
	case b.MaxPrintedDocs < 0:
		return fmt.Errorf("sdk: Budgets.MaxPrintedDocs %d is negative", b.MaxPrintedDocs)
	case b.MaxObservationTokens < 0:
		return fmt.Errorf("sdk: Budgets.MaxObservationTokens %d is negative", b.MaxObservationTokens)
	case b.MaxSourceBytes < 0:
		return fmt.Errorf("sdk: Budgets.MaxSourceBytes %d is negative", b.MaxSourceBytes)
	case b.MaxMemoryBytes < 0:
		return fmt.Errorf("sdk: Budgets.MaxMemoryBytes %d is negative", b.MaxMemoryBytes)
	}
	return nil
}

// withDefaults fills zero fields with the package defaults.
func (b Budgets) withDefaults() Budgets {
	b = b.withTimeout(cmp.Or(b.timeout(), DefaultTimeout))
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	if b.MaxSteps == 0 {
		b.MaxSteps = DefaultMaxSteps
	}
	def(&b.MaxCalls, DefaultMaxCalls)
	def(&b.MaxCandidates, DefaultMaxCandidates)
	def(&b.MaxWidth, DefaultMaxWidth)
	def(&b.MaxRerankDocs, DefaultMaxRerankDocs)
	def(&b.MaxPrintedDocs, DefaultMaxPrintedDocs)
	def(&b.MaxObservationTokens, DefaultMaxObservationTokens)
	def(&b.MaxSourceBytes, DefaultMaxSourceBytes)
	if b.MaxMemoryBytes == 0 {
		b.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	return b
}

// Within returns the budgets of a request r under the runtime's budgets b
// (both with defaults applied): each field is r's value when set and
// smaller, else b's.
func (b Budgets) Within(r Budgets) Budgets {
	lower := func(v *int, req int) {
		if req > 0 && req < *v {
			*v = req
		}
	}
	if r.MaxSteps > 0 && r.MaxSteps < b.MaxSteps {
		b.MaxSteps = r.MaxSteps
	}
	if t := r.timeout(); t > 0 && t < b.Timeout {
		b = b.withTimeout(t)
	}
	lower(&b.MaxCalls, r.MaxCalls)
	lower(&b.MaxCandidates, r.MaxCandidates)
	lower(&b.MaxWidth, r.MaxWidth)
	lower(&b.MaxRerankDocs, r.MaxRerankDocs)
	lower(&b.MaxPrintedDocs, r.MaxPrintedDocs)
	lower(&b.MaxObservationTokens, r.MaxObservationTokens)
	lower(&b.MaxSourceBytes, r.MaxSourceBytes)
	if r.MaxMemoryBytes > 0 && r.MaxMemoryBytes < b.MaxMemoryBytes {
		b.MaxMemoryBytes = r.MaxMemoryBytes
	}
	return b
}

// Corpus resolves index rows to documents; *index.Index implements it.
// A Corpus whose fetches can block (a remote one, such as the router's)
// should also implement ContextCorpus, so that a fetch stops when the
// program's context ends.
type Corpus interface {
	Doc(row int32) (rlsearch.Document, error)
}

// ContextCorpus is a Corpus whose fetches can be stopped: the runtime calls
// DocContext with the program's context (its deadline, and the request's
// cancellation when the client leaves), which returns ctx.Err() (wrapped
// or not) once ctx ends. The router's document source implements it
// (server.ContextDocSource has the same method).
type ContextCorpus interface {
	Corpus
	DocContext(ctx context.Context, row int32) (rlsearch.Document, error)
}

// docOf is c's document at row within ctx: nothing is fetched once ctx has
// ended, and a ContextCorpus gets ctx.
func docOf(ctx context.Context, c Corpus, row int32) (rlsearch.Document, error) {
	if err := ctx.Err(); err != nil {
		return rlsearch.Document{}, err
	}
	if cc, ok := c.(ContextCorpus); ok {
		return cc.DocContext(ctx, row)
	}
	return c.Doc(row)
}

// Config configures a Runtime. Zero fields mean the documented defaults.
type Config struct {
	// Retrievers by name, as (*index.Index).Retrievers() returns them.
	// A route is what a program asks for, dense() (RouteDense) or sparse()
	// (RouteSparse); DenseRetriever and SparseRetriever are the keys of
	// Retrievers that serve them. A program calling a route whose
	// retriever is missing gets an "unavailable" error observation.
	Retrievers map[string]rlsearch.Retriever
	// DenseRetriever and SparseRetriever are the keys in Retrievers of the
	// retrievers behind dense() and sparse(); defaults
	// rlsearch.RetrieverE5 ("e5") and rlsearch.RetrieverBM25 ("bm25").
	DenseRetriever, SparseRetriever string
	// Docs resolves hit rows to documents (required).
	Docs Corpus
	// Reranker serves rerank(); nil means rerank() fails with an
	// "unavailable" error observation (never a fake score).
	Reranker rlsearch.Reranker
	// Tokens counts observation tokens; nil means BoundTokens, a byte-class
	// estimate that never counts fewer than a quarter of the tokens of a
	// byte-level BPE (Qwen3) and counts 1.20× Qwen3 on English Wikipedia
	// passages. Configure the policy's tokenizer (serve
	// --policy-tokenizer) for exact counts.
	Tokens rlsearch.TokenCounter
	// Budgets per program; zero fields mean the defaults.
	Budgets Budgets
	// RRFK is the reciprocal rank fusion constant; 0 means 60 (Cormack et
	// al. 2009, RPL). fuse(..., k=) overrides it per call.
	RRFK float64
	// DocFormat renders one printed document; placeholders {index}
	// (1-based over the observation), {id}, {title} (without its
	// quotes), {title_line} (the first line of contents as stored, the
	// title in its double quotes; "" for a passage without a title
	// line), {text}, {score} (%.4f), {routes} (comma-separated). Default
	// DefaultDocFormat, the Search-R1 observation format.
	DocFormat string
	// ErrorFormat renders the error line appended to the observation;
	// placeholders {code} and {message}. Default DefaultErrorFormat.
	ErrorFormat string
	// MaxHeapBytes: when the process's Go heap grows by more than this
	// while a program runs, the program stops with CodeOverloaded (the
	// process heap guard, watchdog.go; Serve answers 503 with
	// Retry-After). The heap is sampled every millisecond and is the
	// process's, not the program's, so the stop is not the program's
	// answer; its own memory is Budgets.MaxMemoryBytes. 0 means
	// DefaultMaxHeapBytes (2 GiB); rlsearch.Off (any negative value) turns
	// the guard off.
	MaxHeapBytes int64
	// MaxBatch is the most queries coalesced into one retriever call; 0
	// means 512. CoalesceWait is the longest a queued retrieval call waits
	// for other programs of its batch; 0 means 2 ms.
	MaxBatch     int
	CoalesceWait time.Duration
	// MaxBodyBytes bounds a request body of POST /v1/programs/execute
	// (applied by the HTTP layer, server); 0 means
	// DefaultMaxBodyBytes (64 MiB).
	MaxBodyBytes int64
	// MaxConcurrent bounds the programs executing at once across all
	// RunBatch calls of the Runtime (so across all Serve requests); 0
	// means 2 × GOMAXPROCS at New. A program's time budget starts when it
	// starts executing, not while it is queued, so results do not depend
	// on the batch size; the bound also keeps concurrent programs from
	// sharing the heap watchdog's budget many times over. Run is not
	// bounded by it.
	MaxConcurrent int
}

// Validate reports the first bad field.
func (c Config) Validate() error {
	switch {
	case c.Docs == nil:
		return errors.New("sdk: Config.Docs is required")
	case c.RRFK < 0:
		return fmt.Errorf("sdk: Config.RRFK %v is negative", c.RRFK)
	case c.MaxBatch < 0:
		return fmt.Errorf("sdk: Config.MaxBatch %d is negative", c.MaxBatch)
	case c.MaxBodyBytes < 0:
		return fmt.Errorf("sdk: Config.MaxBodyBytes %d is negative", c.MaxBodyBytes)
	case c.MaxConcurrent < 0:
		return fmt.Errorf("sdk: Config.MaxConcurrent %d is negative", c.MaxConcurrent)
	case c.CoalesceWait < 0:
		return fmt.Errorf("sdk: Config.CoalesceWait %v is negative", c.CoalesceWait)
	}
	for name, r := range c.Retrievers {
		if r == nil {
			return fmt.Errorf("sdk: Config.Retrievers[%q] is nil", name)
		}
	}
	return c.Budgets.Validate()
}

func (c Config) withDefaults() Config {
	if c.DenseRetriever == "" {
		c.DenseRetriever = rlsearch.RetrieverE5
	}
	if c.SparseRetriever == "" {
		c.SparseRetriever = rlsearch.RetrieverBM25
	}
	if c.Tokens == nil {
		c.Tokens = BoundTokens{}
	}
	c.Budgets = c.Budgets.withDefaults()
	if c.RRFK == 0 {
		c.RRFK = DefaultRRFK
	}
	if c.DocFormat == "" {
		c.DocFormat = DefaultDocFormat
	}
	if c.ErrorFormat == "" {
		c.ErrorFormat = DefaultErrorFormat
	}
	if c.MaxHeapBytes == 0 {
		c.MaxHeapBytes = DefaultMaxHeapBytes
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = 512
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.CoalesceWait == 0 {
		c.CoalesceWait = 2 * time.Millisecond
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 2 * runtime.GOMAXPROCS(0)
	}
	return c
}

// WhitespaceTokens counts whitespace-separated words (rlsearch.WhitespaceTokens).
type WhitespaceTokens = rlsearch.WhitespaceTokens

// BoundTokens estimates byte-level BPE (Qwen3) token counts from byte
// classes, never below a quarter of the real count; the runtime's default
// counter (rlsearch.BoundTokens, where it lives so that package reward
// counts observation tokens the same way without importing sdk).
type BoundTokens = rlsearch.BoundTokens
