package sdk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/rlsearch/rlsearch/sdk/python"
)

// Programs run on sdk/python: our own Python scanner, parser and
// closure-compiled interpreter (README "Which Python runs").

// pyDoc is a Doc inside a program: read-only attributes, equal when id and
// contents are equal, hashed like its id (as the reference SDK's Doc).
type pyDoc struct{ d *Doc }

var pyDocAttrs = []string{"contents", "id", "routes", "score", "text", "title"}

func (v pyDoc) TypeName() string    { return "Doc" }
func (v pyDoc) AttrNames() []string { return pyDocAttrs }
func (v pyDoc) Key() any            { return "\x00doc:" + v.d.ID + "\x00" + v.d.Contents }
func (v pyDoc) PyHash() int64       { return python.StrHash(v.d.ID) }
func (v pyDoc) Repr() string {
	return "Doc(id=" + python.StrRepr(v.d.ID) + ", title=" + python.StrRepr(v.d.Title()) + ", score=" + python.FloatRepr(v.d.Score) + ")"
}

func (v pyDoc) Attr(name string) (python.Value, bool) {
	switch name {
	case "id":
		return v.d.ID, true
	case "title":
		return v.d.Title(), true
	case "text":
		return v.d.Text(), true
	case "contents":
		return v.d.Contents, true
	case "score":
		return v.d.Score, true
	case "routes":
		t := make(python.Tuple, len(v.d.Routes))
		for i, r := range v.d.Routes {
			t[i] = r
		}
		return t, true
	}
	return nil, false
}

// pyDocType is `Doc`, for isinstance(x, Doc).
var pyDocType = &python.Type{Name: "Doc", Is: func(v python.Value) bool { _, ok := v.(pyDoc); return ok },
	Call: func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
		t.Raise(python.TypeError, "Doc values come from dense(), sparse(), fuse(), rerank() and doc(); they cannot be constructed")
		return nil
	}}

func pyDocList(docs []Doc) *python.List {
	vs := make([]python.Value, len(docs))
	for i := range docs {
		d := docs[i]
		vs[i] = pyDoc{&d}
	}
	return python.NewList(vs)
}

func pyToDocs(fn, what string, v python.Value) ([]Doc, error) {
	var items []python.Value
	switch x := v.(type) {
	case *python.List:
		items = x.V
	case python.Tuple:
		items = x
	case string:
		return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s must be a list of documents, got string", fn, what)
	default:
		return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s must be a list of documents, got %s", fn, what, python.TypeNameOf(v))
	}
	out := make([]Doc, len(items))
	for i, it := range items {
		d, ok := it.(pyDoc)
		if !ok {
			return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s[%d] must be a document, got %s", fn, what, i, python.TypeNameOf(it))
		}
		out[i] = *d.d
	}
	return out, nil
}

// pyFail raises err in the program: budgets and stops end it (uncatchable),
// other SDK failures are catchable SDKError exceptions.
func (st *execState) pyFail(t *python.Thread, err error) {
	var e *Error
	if errors.As(err, &e) && (e.Code == CodeBudget || e.Code == CodeCancelled) {
		st.cancel(e)
		t.Stop(e)
	}
	t.RaiseHost(err)
}

// primitive costs: one step, and the documents a call can return.
func pyCostCall(t *python.Thread, args []python.Value) { t.Charge("retrieval call", 0, 1) }

func pyCostDocs(t *python.Thread, args []python.Value) {
	var n uint64
	for _, a := range args {
		switch x := a.(type) {
		case *python.List:
			n += uint64(len(x.V))
			for _, e := range x.V {
				if l, ok := e.(*python.List); ok {
					n += uint64(len(l.V))
				}
			}
		case python.Tuple:
			n += uint64(len(x))
		}
	}
	t.Charge("documents", n*64, n+1)
}

func (st *execState) pyBuiltins(question string) map[string]python.Value {
	route := func(r string) *python.Builtin {
		return python.NewBuiltin(r, pyCostCall, func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
			a := python.ParseArgs(t, r, args, kw, "query", "k?")
			q, ok := a[0].(string)
			if !ok {
				st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "%s: query must be a string, got %s", r, python.TypeNameOf(a[0])))
			}
			k := DefaultK
			if a[1] != nil {
				switch n := a[1].(type) {
				case int64:
					k = int(max(min(n, math.MaxInt32), math.MinInt32))
				case *big.Int:
					st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "%s: k = %s is out of range", r, n.String()))
				default:
					st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "%s: k must be an int, got %s", r, python.TypeNameOf(a[1])))
				}
			}
			if k >= 1 && k <= st.b.MaxWidth {
				t.Charge(r, uint64(k)*200, uint64(k))
			}
			docs, err := st.search(r, q, k)
			if err != nil {
				st.pyFail(t, err)
			}
			return pyDocList(docs)
		})
	}
	g := map[string]python.Value{
		"question": question,
		"Doc":      pyDocType,
		"dense":    route(RouteDense),
		"sparse":   route(RouteSparse),
	}
	g["fuse"] = python.NewBuiltin("fuse", pyCostDocs, func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
		rrf := st.rt.cfg.RRFK
		for _, a := range kw {
			if a.Name != "k" {
				st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "fuse: unexpected keyword argument %s", python.StrRepr(a.Name)))
			}
			if a.Value == python.None {
				continue
			}
			var f float64
			switch x := a.Value.(type) {
			case int64:
				f = float64(x)
			case float64:
				f = x
			default:
				st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "fuse: k must be a number, got %s", python.TypeNameOf(a.Value)))
			}
			rrf = f
		}
		lists := args
		if len(args) == 1 {
			var inner []python.Value
			switch x := args[0].(type) {
			case *python.List:
				inner = x.V
			case python.Tuple:
				inner = x
			}
			if len(inner) > 0 {
				switch inner[0].(type) {
				case *python.List, python.Tuple:
					lists = inner
				}
			}
		}
		in := make([][]Doc, len(lists))
		for i, l := range lists {
			d, err := pyToDocs("fuse", fmt.Sprintf("list %d", i+1), l)
			if err != nil {
				st.pyFail(t, err)
			}
			in[i] = d
		}
		out, err := Fuse(in, rrf)
		if err != nil {
			st.pyFail(t, err)
		}
		return pyDocList(out)
	})
	g["dedup"] = python.NewBuiltin("dedup", pyCostDocs, func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
		a := python.ParseArgs(t, "dedup", args, kw, "docs")
		docs, err := pyToDocs("dedup", "docs", a[0])
		if err != nil {
			st.pyFail(t, err)
		}
		out, err := Dedup(docs)
		if err != nil {
			st.pyFail(t, err)
		}
		return pyDocList(out)
	})
	g["rerank"] = python.NewBuiltin("rerank", pyCostDocs, func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
		a := python.ParseArgs(t, "rerank", args, kw, "query", "docs", "k?")
		q, ok := a[0].(string)
		if !ok {
			st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "rerank: query must be a string, got %s", python.TypeNameOf(a[0])))
		}
		docs, err := pyToDocs("rerank", "docs", a[1])
		if err != nil {
			st.pyFail(t, err)
		}
		k := len(docs)
		if a[2] != nil && a[2] != python.None {
			n, ok := a[2].(int64)
			if !ok {
				st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "rerank: k must be an int, got %s", python.TypeNameOf(a[2])))
			}
			k = int(max(min(n, math.MaxInt32), math.MinInt32))
			switch {
			case k < 1:
				st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "rerank: k = %d must be ≥ 1", k))
			case k > st.b.MaxWidth:
				st.pyFail(t, newErr(CodeBudget, ErrBudget, "rerank: k = %d exceeds the cap of %d", k, st.b.MaxWidth))
			}
		}
		if len(docs) > st.b.MaxRerankDocs {
			st.pyFail(t, newErr(CodeBudget, ErrBudget, "rerank: %d documents exceed the cap of %d per call", len(docs), st.b.MaxRerankDocs))
		}
		if len(q) > DefaultMaxQueryBytes {
			st.pyFail(t, newErr(CodeBudget, ErrBudget, "rerank: query of %d bytes exceeds the cap of %d", len(q), DefaultMaxQueryBytes))
		}
		st.stats.Reranks++
		out, err := st.rt.Rerank(st.ctx, q, docs, k)
		if err != nil {
			if st.ctx.Err() != nil {
				st.pyFail(t, st.ctxErr())
			}
			st.pyFail(t, err)
		}
		return pyDocList(out)
	})
	g["doc"] = python.NewBuiltin("doc", pyCostCall, func(t *python.Thread, args []python.Value, kw []python.KV) python.Value {
		a := python.ParseArgs(t, "doc", args, kw, "id")
		id, ok := a[0].(string)
		if !ok {
			st.pyFail(t, newErr(CodeRuntime, ErrBadArgument, "doc: id must be a string, got %s", python.TypeNameOf(a[0])))
		}
		d, ok := st.seen[id]
		if !ok {
			st.pyFail(t, newErr(CodeUnknownDoc, ErrUnknownDoc, "doc: %q was not retrieved by this program", id))
		}
		return pyDoc{&d}
	})
	return g
}

// pyDocArgs reports whether every argument is a Doc or a list or tuple of
// Docs (at least one argument) and flattens them.
func pyDocArgs(args []python.Value) ([]Doc, bool) {
	if len(args) == 0 {
		return nil, false
	}
	var out []Doc
	for _, a := range args {
		switch v := a.(type) {
		case pyDoc:
			out = append(out, *v.d)
		case *python.List, python.Tuple:
			var items []python.Value
			if l, ok := v.(*python.List); ok {
				items = l.V
			} else {
				items = v.(python.Tuple)
			}
			for _, it := range items {
				d, ok := it.(pyDoc)
				if !ok {
					return nil, false
				}
				out = append(out, *d.d)
			}
		default:
			return nil, false
		}
	}
	return out, true
}

// runPython compiles and runs src; it fills res and returns false on
// failure.
func (st *execState) runPython(ctx context.Context, src, question string, res *Result) bool {
	prog, err := python.Compile(src)
	if err != nil {
		var pe *python.Error
		code := CodeSyntax
		msg := err.Error()
		if errors.As(err, &pe) && pe.Unsupported {
			code = CodeUnsupported
		}
		st.fail(res, newErr(code, nil, "%s", msg))
		return false
	}
	th := &python.Thread{
		MaxSteps:      st.b.MaxSteps,
		MaxMem:        uint64(st.b.MaxMemoryBytes),
		CheckEvery:    stepChunk,
		MaxPrintBytes: DefaultMaxObservationBytes,
		Budget: func(kind, what string, need, used, limit uint64) error {
			var e *Error
			switch kind {
			case "observation":
				e = newErr(CodeBudget, ErrBudget, "observation budget exceeded: over %d bytes printed", limit)
			case "depth":
				e = newErr(CodeBudget, ErrBudget, "recursion budget exceeded: calling %s would nest %d calls, the cap is %d (use a loop)", what, need, limit)
			case "memory":
				e = newErr(CodeBudget, ErrBudget, "memory budget exceeded: %s would allocate about %s; %s of the program's %s are already used", what, fmtBytes(need), fmtBytes(used), fmtBytes(limit))
			default:
				e = newErr(CodeBudget, ErrBudget, "step budget of %d steps exceeded: %s needs about %d steps, %d are used", limit, what, need, used)
			}
			st.stop.CompareAndSwap(nil, e)
			return e
		},
		Check: func() error {
			if e := st.stop.Load(); e != nil {
				return e
			}
			if st.ctx.Err() != nil {
				e := st.ctxErr()
				st.stop.CompareAndSwap(nil, e)
				return e
			}
			return nil
		},
		Print: func(_ *python.Thread, s string) error {
			if err := st.emit(s, nil); err != nil {
				return err
			}
			return nil
		},
	}
	th.PrintHook = func(t *python.Thread, args []python.Value, sep, end string) bool {
		docs, ok := pyDocArgs(args)
		if !ok {
			return false
		}
		var sb strings.Builder
		for i, d := range docs {
			sb.WriteString(st.rt.formatDoc(st.stats.PrintedDocs+i+1, d))
		}
		if err := st.emit(sb.String(), docs); err != nil {
			t.Stop(err)
		}
		return true
	}
	st.mu.Lock()
	st.py = th
	st.mu.Unlock()
	if e := st.stop.Load(); e != nil {
		th.Cancel(e) // stopped while compiling
	}
	if st.rt.cfg.MaxHeapBytes > 0 {
		watchStart(st)
		defer watchStop(st)
	}
	stop := context.AfterFunc(ctx, func() { st.cancel(st.ctxErr()) })
	defer stop()
	err = th.Exec(prog, st.pyBuiltins(question))
	st.mem = th.Mem
	res.Stats = st.stats
	res.Stats.Steps = th.Steps
	if err == nil {
		return true
	}
	st.fail(res, st.pyError(th, err))
	res.Stats.Steps = th.Steps
	return false
}

// pyError turns what stopped a program into a coded error with its line.
func (st *execState) pyError(th *python.Thread, err error) error {
	var ee *python.ExecError
	if errors.As(err, &ee) {
		line := fmt.Sprintf("line %d: ", ee.Exc.Line)
		var e *Error
		if ee.Exc.Host != nil && errors.As(ee.Exc.Host, &e) {
			return &Error{Code: e.Code, Msg: line + e.Msg, err: e}
		}
		code := CodeRuntime
		if ee.Exc.Class == python.RecursionError {
			code = CodeRuntime
		}
		return &Error{Code: code, Msg: line + ee.Exc.Error(), err: err}
	}
	if e := st.stop.Load(); e != nil {
		err = e
	}
	line := ""
	if n := th.Line(); n > 0 {
		line = fmt.Sprintf("line %d: ", n)
	}
	var e *Error
	if errors.As(err, &e) {
		return &Error{Code: e.Code, Msg: line + e.Msg, err: e}
	}
	var u *python.Unsupported
	if errors.As(err, &u) {
		return &Error{Code: CodeUnsupported, Msg: line + u.Msg, err: err}
	}
	return &Error{Code: CodeInternal, Msg: line + err.Error(), err: err}
}
