package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/sdk/python"
)

// programFile is the file name positions in error observations refer to.
const programFile = "program"

// stepChunk is how many Starlark steps run between budget checks (time,
// context, heap); ≈ 0.2–0.5 ms of computation.
const stepChunk = 10_000

// fileOptions admit the Python constructs policies write (while loops,
// top-level control flow and reassignment, set()); recursion stays off
// (Starlark's default), so deep recursion is an error, not a Go stack blow-up.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// Runtime executes retrieval programs against one index. It is safe for
// concurrent use; each Run has its own Starlark thread and budgets.
type Runtime struct {
	cfg Config
	// slots bounds the programs of all RunBatch calls (all Serve
	// requests) executing at once: Config.MaxConcurrent. A slot is held
	// until the program's goroutine really ends, even when its caller
	// stopped waiting (see abandonGrace).
	slots chan struct{}
}

// New validates cfg and returns a Runtime.
func New(cfg Config) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Runtime{cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrent)}, nil
}

// Config returns the runtime's configuration with defaults applied.
func (rt *Runtime) Config() Config { return rt.cfg }

// Request is one program to run.
type Request struct {
	// ID is echoed in the Result.
	ID string `json:"id,omitempty"`
	// Code is the program source. When empty, the last <code>…</code> block
	// of Response is run (see ExtractCode).
	Code     string `json:"code,omitempty"`
	Response string `json:"response,omitempty"`
	// Question is visible to the program as the global `question`.
	Question string `json:"question,omitempty"`
	// Budgets lower the runtime's budgets for this program (never raise).
	Budgets *Budgets `json:"budgets,omitempty"`
}

// Stats counts what a program used. Its JSON is what the RPL reward reads
// from a turn (reward.RPLTurn accepts a Result as is): retrieval_calls,
// candidates, printed_tokens.
type Stats struct {
	RetrievalCalls int    `json:"retrieval_calls"` // retrieval calls (dense, sparse)
	Candidates     int    `json:"candidates"`      // documents returned by retrieval calls
	Reranks        int    `json:"reranks"`         // rerank calls
	PrintedDocs    int    `json:"printed_docs"`    // documents printed
	PrintedTokens  int    `json:"printed_tokens"`  // observation tokens before the error line (Config.Tokens)
	Steps          uint64 `json:"steps"`           // Starlark execution steps, including the steps charged for work inside builtins
	MemoryBytes    uint64 `json:"memory_bytes"`    // bytes charged to the program's memory budget (cumulative estimate; see meter.go)
}

// statsJSON is Stats without its methods.
type statsJSON Stats

// MarshalJSON writes Stats with its field names plus "calls", a deprecated
// copy of "retrieval_calls" kept for one release for clients written
// against the old name (the field was "calls" before 2026-12-01).
func (s Stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		statsJSON
		Calls int `json:"calls"`
	}{statsJSON(s), s.RetrievalCalls})
}

// UnmarshalJSON reads Stats, taking the deprecated "calls" when
// "retrieval_calls" is absent.
func (s *Stats) UnmarshalJSON(b []byte) error {
	var v struct {
		statsJSON
		Calls *int `json:"calls"`
		RC    *int `json:"retrieval_calls"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Stats(v.statsJSON)
	switch {
	case v.RC != nil:
		s.RetrievalCalls = *v.RC
	case v.Calls != nil:
		s.RetrievalCalls = *v.Calls
	}
	return nil
}

// Result is the outcome of one program. Observation is what the policy
// sees: the printed text, then, when the program failed, one error line
// (Config.ErrorFormat). PrintedIDs lists the ids of printed documents in
// print order (documents printed through print(doc) or print(docs) only).
type Result struct {
	ID          string    `json:"id,omitempty"`
	Observation string    `json:"observation"`
	PrintedIDs  []string  `json:"printed_ids"`
	Code        ErrorCode `json:"code"`
	Error       string    `json:"error,omitempty"`
	Stats       Stats     `json:"stats"`
}

// abandonGrace is how long after a program's deadline (or its caller's
// cancellation) the caller waits for the program to stop before it returns
// a budget_exceeded (or cancelled) result without it: one Starlark
// operation (a huge multiplication, str() of a huge int) cannot be
// interrupted, and the caller must still get its answer on time. The
// abandoned goroutine runs on until that operation ends.
const abandonGrace = 50 * time.Millisecond

// Run executes one program. cache, when non-nil, memoises retrieval calls
// (share it across related runs); nil retrieves every call. Run never
// panics and never returns an error: every failure is in Result.Code and
// in the observation. For a given index, configuration and request, the
// observation is byte-identical across runs, except for timeouts and memory
// stops, which depend on the machine.
func (rt *Runtime) Run(ctx context.Context, req Request, cache *Cache) Result {
	return rt.run(ctx, req, directFetcher{cache: cache})
}

// RunProgram executes the canonical source of a typed program (p.Source()).
// An invalid program yields a runtime_error result naming the rule it breaks.
func (rt *Runtime) RunProgram(ctx context.Context, p Program, question string, cache *Cache) Result {
	if err := p.Validate(); err != nil {
		return Result{Code: CodeRuntime, Error: err.Error(), Observation: rt.errorLine(CodeRuntime, err.Error()), PrintedIDs: []string{}}
	}
	return rt.Run(ctx, Request{Code: p.Source(), Question: question}, cache)
}

type execState struct {
	rt       *Runtime
	ctx      context.Context
	b        Budgets
	fetch    fetcher
	out      strings.Builder
	printed  []string
	stats    Stats
	mu       sync.Mutex            // guards out, printed and the printed counts of stats against abandon's reads
	seen     map[string]Doc        // every document retrieved, by id
	stop     atomic.Pointer[Error] // why the thread was cancelled (set from other goroutines too)
	thread   *starlark.Thread
	py       *python.Thread // the program's interpreter (pyrun.go)
	deadline time.Time
	mem      uint64 // bytes charged (meter.go); owned by the program goroutine
}

func (rt *Runtime) run(ctx context.Context, req Request, f fetcher) Result {
	return rt.exec(ctx, req, f, nil)
}

// exec runs req in its own goroutine, its time budget starting now, and
// returns its result, or, when the program has not stopped abandonGrace
// after its deadline or ctx's cancellation, a budget_exceeded (cancelled)
// result with what it had printed so far. done, when non-nil, is called
// once the program's goroutine has really ended (after exec returned, for
// an abandoned program).
func (rt *Runtime) exec(ctx context.Context, req Request, f fetcher, done func()) Result {
	b := rt.cfg.Budgets
	if req.Budgets != nil {
		b = b.Within(*req.Budgets)
	}
	st := &execState{rt: rt, b: b, fetch: f, seen: map[string]Doc{}}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	st.ctx = ctx
	st.deadline, _ = ctx.Deadline()
	ch := make(chan Result, 1)
	go func() {
		if done != nil {
			defer done()
		}
		ch <- st.runBody(req)
		releaseMemory(st.mem) // after runBody: its frame no longer holds the program's values
	}()
	select {
	case res := <-ch:
		return res
	case <-ctx.Done():
	}
	t := time.NewTimer(abandonGrace)
	defer t.Stop()
	select {
	case res := <-ch:
		return res
	case <-t.C:
	}
	// Abandoned: the goroutine still owns st; only the printed output is
	// shared, under st.mu.
	err := st.ctxErr()
	err.Msg += fmt.Sprintf(" (the program was abandoned %v later, inside one operation that cannot be interrupted)", abandonGrace)
	st.cancel(err)
	st.mu.Lock()
	res := Result{
		ID:          req.ID,
		Code:        err.Code,
		Error:       err.Msg,
		Observation: st.out.String() + rt.errorLine(err.Code, err.Msg),
		PrintedIDs:  append([]string{}, st.printed...),
		Stats:       Stats{PrintedDocs: st.stats.PrintedDocs, PrintedTokens: st.stats.PrintedTokens},
	}
	st.mu.Unlock()
	return res
}

// runBody compiles and executes req on the calling goroutine.
func (st *execState) runBody(req Request) (res Result) {
	b := st.b
	res.ID = req.ID
	defer func() {
		if p := recover(); p != nil {
			// A Go panic inside the interpreter or a builtin is triggered by
			// the program's values (Starlark has panics on some extreme
			// inputs): a program error, not a server fault.
			st.fail(&res, newErr(CodeRuntime, nil, "the interpreter refused this program: %v", p))
		}
		res.Stats.MemoryBytes = st.mem
	}()
	src := req.Code
	if src == "" && req.Response != "" {
		code, ok := ExtractCode(req.Response)
		if !ok {
			st.fail(&res, newErr(CodeSyntax, nil, "no <code>…</code> block in the response"))
			return res
		}
		src = code
	}
	if len(src) > b.MaxSourceBytes {
		st.fail(&res, newErr(CodeBudget, ErrBudget, "program is %d bytes, over the %d-byte source budget", len(src), b.MaxSourceBytes))
		return res
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// Starlark's scanner stops at NUL: the rest would be dropped silently.
		st.fail(&res, newErr(CodeSyntax, nil, "line %d: NUL byte at offset %d of the source (write \\x00 inside a string instead)", strings.Count(src[:i], "\n")+1, i))
		return res
	}
	ctx := st.ctx

	if !st.runPython(ctx, src, req.Question, &res) {
		return res
	}
	res.Code = CodeOK
	res.Observation = st.out.String()
	res.PrintedIDs = st.printedIDs()
	return res
}

func (st *execState) printedIDs() []string {
	if st.printed == nil {
		return []string{}
	}
	return st.printed
}

// fail fills res for an error.
func (st *execState) fail(res *Result, err error) {
	code := codeOf(err)
	msg := err.Error()
	steps := res.Stats.Steps
	res.Stats = st.stats
	res.Stats.Steps = steps
	res.Stats.MemoryBytes = st.mem
	res.Code = code
	res.Error = msg
	res.Observation = st.out.String() + st.rt.errorLine(code, msg)
	res.PrintedIDs = st.printedIDs()
}

func (rt *Runtime) errorLine(code ErrorCode, msg string) string {
	return strings.NewReplacer("{code}", string(code), "{message}", msg).Replace(rt.cfg.ErrorFormat)
}

func (st *execState) ctxErr() *Error {
	if errors.Is(st.ctx.Err(), context.DeadlineExceeded) && !time.Now().Before(st.deadline) {
		return newErr(CodeBudget, ErrBudget, "time budget of %v exceeded", st.b.Timeout)
	}
	return newErr(CodeCancelled, st.ctx.Err(), "execution cancelled: %v", context.Cause(st.ctx))
}

// cancel records why the program stops and cancels its thread. It is safe
// from any goroutine.
func (st *execState) cancel(err *Error) {
	st.stop.CompareAndSwap(nil, err)
	st.mu.Lock()
	th := st.thread
	py := st.py
	st.mu.Unlock()
	if th != nil {
		th.Cancel(st.stop.Load().Error())
	}
	if py != nil {
		py.Cancel(st.stop.Load())
	}
}

// onSteps runs every stepChunk steps: it enforces the step budget and checks
// time and cancellation (the heap is watched by watchdog.go).
func (st *execState) onSteps(th *starlark.Thread) {
	steps := th.ExecutionSteps()
	if steps >= st.b.MaxSteps {
		st.cancel(newErr(CodeBudget, ErrBudget, "step budget of %d Starlark steps exceeded", st.b.MaxSteps))
		return
	}
	if st.ctx.Err() != nil {
		st.cancel(st.ctxErr())
		return
	}
	th.SetMaxExecutionSteps(min(steps+stepChunk, st.b.MaxSteps))
}

// runtimeError turns an execution error into a coded error with the
// program line where it happened.
func (st *execState) runtimeError(err error) error {
	var ee *starlark.EvalError
	line := ""
	if errors.As(err, &ee) {
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			if p := ee.CallStack[i].Pos; p.Filename() == programFile && p.Line > 0 {
				line = fmt.Sprintf("line %d: ", p.Line)
				break
			}
		}
	}
	if e := st.stop.Load(); e != nil {
		err = e
	}
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Msg: line + e.Msg, err: e}
	}
	msg := err.Error()
	if ee != nil {
		msg = ee.Msg
	}
	code := CodeRuntime
	if strings.Contains(msg, "called recursively") {
		code = CodeUnsupported
		msg += " (recursion is not supported; use a loop)"
	}
	return &Error{Code: code, Msg: line + msg, err: err}
}

// pythonKeywords (statements) and pythonBuiltins (functions) are Python
// names that Starlark programs lack; using one is an unsupported_feature,
// not a plain syntax error.
var pythonKeywords = map[string]bool{
	"import": true, "from": true, "class": true, "try": true, "except": true, "finally": true, "with": true,
	"raise": true, "yield": true, "global": true, "nonlocal": true, "del": true, "assert": true, "async": true, "await": true,
}

var pythonBuiltins = map[string]bool{
	"open": true, "eval": true, "exec": true, "__import__": true, "input": true, "globals": true, "locals": true,
	"vars": true, "compile": true, "sum": true, "map": true, "filter": true, "iter": true, "next": true,
	"isinstance": true, "round": true, "pow": true, "divmod": true, "exit": true, "quit": true, "help": true,
	"id": true, "object": true, "super": true, "property": true, "staticmethod": true, "classmethod": true,
	"memoryview": true, "bytearray": true, "frozenset": true, "complex": true, "format": true, "breakpoint": true,
}

// compileError classifies a parse or resolve error.
func compileError(src string, err error) error {
	var pos syntax.Position
	msg := err.Error()
	var se syntax.Error
	var rl resolve.ErrorList
	switch {
	case errors.As(err, &se):
		pos, msg = se.Pos, se.Msg
	case errors.As(err, &rl) && len(rl) > 0:
		pos, msg = rl[0].Pos, rl[0].Msg
	}
	line := ""
	if pos.Line > 0 {
		line = fmt.Sprintf("line %d: ", pos.Line)
	}
	text := srcLine(src, int(pos.Line))
	first := strings.TrimSpace(text)
	if i := strings.IndexAny(first, " \t(:."); i >= 0 {
		first = first[:i]
	}
	switch {
	case pythonKeywords[first]:
		return newErr(CodeUnsupported, nil, "%sPython `%s` statements are not supported in programs (Starlark dialect: no imports, classes, exceptions)", line, first)
	case strings.HasPrefix(msg, "undefined: ") && pythonBuiltins[strings.TrimPrefix(msg, "undefined: ")]:
		return newErr(CodeUnsupported, nil, "%sPython builtin %s is not available in programs", line, strings.TrimPrefix(msg, "undefined: "))
	case strings.Contains(text, `f"`) || strings.Contains(text, `f'`):
		if strings.Contains(msg, "got string literal") || strings.Contains(msg, "got") {
			return newErr(CodeUnsupported, nil, "%sf-strings are not supported; use \"%%s\" %% x or str(x): %s", line, msg)
		}
	}
	return newErr(CodeSyntax, nil, "%s%s", line, msg)
}

func srcLine(src string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return src
}

// emit appends text (and the printed documents' ids) to the observation,
// enforcing the byte, token and printed-document budgets. Text that would
// break a budget is not appended; the program stops.
func (st *execState) emit(text string, docs []Doc) error {
	if e := st.stop.Load(); e != nil {
		return e
	}
	var err *Error
	tokens := 0
	switch {
	case st.stats.PrintedDocs+len(docs) > st.b.MaxPrintedDocs:
		err = newErr(CodeBudget, ErrBudget, "printed-document budget exceeded: %d documents printed, the cap is %d", st.stats.PrintedDocs+len(docs), st.b.MaxPrintedDocs)
	case st.out.Len()+len(text) > DefaultMaxObservationBytes:
		err = newErr(CodeBudget, ErrBudget, "observation budget exceeded: over %d bytes printed", DefaultMaxObservationBytes)
	default:
		tokens = st.rt.cfg.Tokens.CountTokens(text)
		if st.stats.PrintedTokens+tokens > st.b.MaxObservationTokens {
			err = newErr(CodeBudget, ErrBudget, "observation budget exceeded: printing this would make %d tokens, the cap is %d", st.stats.PrintedTokens+tokens, st.b.MaxObservationTokens)
		}
	}
	if err != nil {
		st.cancel(err)
		return err
	}
	st.mu.Lock()
	st.out.WriteString(text)
	for _, d := range docs {
		st.printed = append(st.printed, d.ID)
	}
	st.stats.PrintedDocs += len(docs)
	st.stats.PrintedTokens += tokens
	st.mu.Unlock()
	return nil
}

// formatDoc renders one document with Config.DocFormat.
func (rt *Runtime) formatDoc(index int, d Doc) string {
	return FormatDoc(rt.cfg.DocFormat, index, d)
}

// FormatDoc renders d with a template (see Config.DocFormat).
func FormatDoc(format string, index int, d Doc) string {
	return strings.NewReplacer(
		"{index}", strconv.Itoa(index),
		"{id}", d.ID,
		"{title}", d.Title(),
		"{title_line}", d.TitleLine(),
		"{text}", d.Text(),
		"{score}", strconv.FormatFloat(d.Score, 'f', 4, 64),
		"{routes}", strings.Join(d.Routes, ","),
	).Replace(format)
}

// search runs one retrieval call for a program, enforcing the call, width
// and candidate budgets, and records the documents it saw. The call budget
// is checked before the retriever is asked: a call over the cap costs the
// index nothing.
func (st *execState) search(route string, query string, k int) ([]Doc, error) {
	if n := st.stats.RetrievalCalls + 1; n > st.b.MaxCalls {
		return nil, newErr(CodeBudget, ErrBudget, "call budget exceeded: %d retrieval calls, the cap is %d", n, st.b.MaxCalls)
	}
	docs, err := st.rt.search(st.ctx, st.fetch, route, query, k, st.b)
	if err != nil {
		if st.ctx.Err() != nil {
			return nil, st.ctxErr() // the program's time ran out while it waited
		}
		return nil, err
	}
	st.stats.RetrievalCalls++
	st.stats.Candidates += len(docs)
	if st.stats.Candidates > st.b.MaxCandidates {
		return nil, newErr(CodeBudget, ErrBudget, "candidate budget exceeded: %d documents retrieved, the cap is %d", st.stats.Candidates, st.b.MaxCandidates)
	}
	for _, d := range docs {
		if prev, ok := st.seen[d.ID]; ok && prev.Contents != d.Contents {
			return nil, conflict(d.ID)
		}
		st.seen[d.ID] = d
	}
	return docs, nil
}

// Search runs one retrieval call outside a program: route is RouteDense or
// RouteSparse, k the width (1..Budgets.MaxWidth). cache may be nil. Hits
// become Docs with the retriever's score and Routes = [route]; exact
// duplicates inside the list are removed and conflicting ids are an error.
func (rt *Runtime) Search(ctx context.Context, route, query string, k int, cache *Cache) ([]Doc, error) {
	return rt.search(ctx, directFetcher{cache: cache}, route, query, k, rt.cfg.Budgets)
}

func (rt *Runtime) search(ctx context.Context, f fetcher, route, query string, k int, b Budgets) ([]Doc, error) {
	name, ok := rt.retrieverKey(route)
	if !ok {
		return nil, newErr(CodeRuntime, ErrBadArgument, "unknown route %q (want %q or %q)", route, RouteDense, RouteSparse)
	}
	switch {
	case k < 1:
		return nil, newErr(CodeRuntime, ErrBadArgument, "%s: k = %d must be ≥ 1", route, k)
	case k > b.MaxWidth:
		return nil, newErr(CodeBudget, ErrBudget, "%s: width k = %d exceeds the cap of %d", route, k, b.MaxWidth)
	case len(query) > DefaultMaxQueryBytes:
		return nil, newErr(CodeBudget, ErrBudget, "%s: query of %d bytes exceeds the cap of %d", route, len(query), DefaultMaxQueryBytes)
	}
	r, ok := rt.cfg.Retrievers[name]
	if !ok {
		return nil, newErr(CodeUnavailable, ErrUnavailable, "%s retrieval is not available on this server (no %q retriever; dense needs a model)", route, name)
	}
	hits, err := f.fetch(ctx, r, query, k)
	if err != nil {
		if errors.Is(err, rlsearch.ErrBadInput) {
			return nil, newErr(CodeRuntime, err, "%s: %v", route, err)
		}
		if e, ok := ctxError(err, b.Timeout); ok {
			return nil, e
		}
		return nil, newErr(CodeInternal, err, "%s: retrieval failed: %v", route, err)
	}
	docs := make([]Doc, 0, len(hits))
	cache := f.docCache()
	for _, h := range hits {
		var doc rlsearch.Document
		if cache != nil {
			doc, err = cache.doc(ctx, rt.cfg.Docs, h.Row)
		} else {
			doc, err = docOf(ctx, rt.cfg.Docs, h.Row)
		}
		if err != nil {
			if e, ok := ctxError(err, b.Timeout); ok && ctx.Err() != nil {
				return nil, e
			}
			return nil, newErr(CodeInternal, err, "%s: document row %d: %v", route, h.Row, err)
		}
		docs = append(docs, Doc{ID: doc.ID, Contents: doc.Contents, Row: h.Row, Score: float64(h.Score), Routes: []string{route}})
	}
	return Dedup(docs)
}

// Rerank reorders docs by the configured reranker's scores for query and
// keeps the first k (all when k ≥ len(docs)), each Doc's Score becoming the
// rerank score; ties keep the input order. Exact duplicates are removed
// first; conflicting ids are an error (document_conflict). It can only
// reorder and cut the documents it is given. Without a reranker it returns
// an error with code unavailable.
func (rt *Runtime) Rerank(ctx context.Context, query string, docs []Doc, k int) ([]Doc, error) {
	out, err := rerankDocs(ctx, rt.cfg.Reranker, query, docs, k)
	if err == nil {
		return out, nil
	}
	var e *Error
	if ce, ok := ctxError(err, rt.cfg.Budgets.Timeout); ok && !errors.As(err, &e) {
		return nil, ce
	}
	switch {
	case errors.As(err, &e):
		return nil, err
	case errors.Is(err, rlsearch.ErrBadInput):
		return nil, newErr(CodeRuntime, err, "%v", err)
	}
	return nil, newErr(CodeInternal, err, "%v", err)
}
