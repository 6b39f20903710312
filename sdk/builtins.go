package sdk

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// DefaultK is the width of dense() and sparse() when a program gives none.
const DefaultK = 10

// docValue is a Doc inside a program: immutable, hashable by id, equal when
// id and contents are equal.
type docValue struct{ d *Doc }

var (
	_ starlark.HasAttrs   = docValue{}
	_ starlark.Comparable = docValue{}
)

func (v docValue) String() string {
	return fmt.Sprintf("Doc(id=%q, title=%q, score=%s)", v.d.ID, v.d.Title(), starlark.Float(v.d.Score).String())
}
func (v docValue) Type() string          { return "Doc" }
func (v docValue) Freeze()               {}
func (v docValue) Truth() starlark.Bool  { return starlark.True }
func (v docValue) Hash() (uint32, error) { return starlark.String(v.d.ID).Hash() }

func (v docValue) CompareSameType(op syntax.Token, y starlark.Value, depth int) (bool, error) {
	w := y.(docValue)
	eq := v.d.ID == w.d.ID && v.d.Contents == w.d.Contents
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("Doc values are not ordered; sort with key=lambda d: d.score")
}

var docAttrs = []string{"contents", "id", "routes", "score", "text", "title"}

func (v docValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "id":
		return starlark.String(v.d.ID), nil
	case "title":
		return starlark.String(v.d.Title()), nil
	case "text":
		return starlark.String(v.d.Text()), nil
	case "contents":
		return starlark.String(v.d.Contents), nil
	case "score":
		return starlark.Float(v.d.Score), nil
	case "routes":
		t := make(starlark.Tuple, len(v.d.Routes))
		for i, r := range v.d.Routes {
			t[i] = starlark.String(r)
		}
		return t, nil
	}
	return nil, nil
}

func (v docValue) AttrNames() []string { return docAttrs }

func docList(docs []Doc) *starlark.List {
	vs := make([]starlark.Value, len(docs))
	for i := range docs {
		d := docs[i]
		vs[i] = docValue{&d}
	}
	return starlark.NewList(vs)
}

// toDocs converts a list or tuple of Doc values.
func toDocs(fn string, what string, v starlark.Value) ([]Doc, error) {
	it, ok := v.(starlark.Indexable)
	if !ok {
		return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s must be a list of documents, got %s", fn, what, v.Type())
	}
	if _, isStr := v.(starlark.String); isStr {
		return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s must be a list of documents, got string", fn, what)
	}
	out := make([]Doc, it.Len())
	for i := range out {
		d, ok := it.Index(i).(docValue)
		if !ok {
			return nil, newErr(CodeRuntime, ErrBadArgument, "%s: %s[%d] must be a document, got %s", fn, what, i, it.Index(i).Type())
		}
		out[i] = *d.d
	}
	return out, nil
}

func (st *execState) builtins(question string) starlark.StringDict {
	d := starlark.StringDict{
		"question": starlark.String(question),
		"dense":    starlark.NewBuiltin("dense", st.routeBuiltin(RouteDense)),
		"sparse":   starlark.NewBuiltin("sparse", st.routeBuiltin(RouteSparse)),
		"fuse":     starlark.NewBuiltin("fuse", st.fuse),
		"dedup":    starlark.NewBuiltin("dedup", st.dedup),
		"rerank":   starlark.NewBuiltin("rerank", st.rerank),
		"doc":      starlark.NewBuiltin("doc", st.doc),
		"print":    starlark.NewBuiltin("print", st.print),
		hookBin:    starlark.NewBuiltin(hookBin, st.bin),
		hookAug:    starlark.NewBuiltin(hookAug, st.aug),
		hookGrow:   starlark.NewBuiltin(hookGrow, st.grow),
		hookAttr:   starlark.NewBuiltin(hookAttr, st.attr),
		hookSlice:  starlark.NewBuiltin(hookSlice, st.slice),
		hookSlot:   starlark.NewBuiltin(hookSlot, st.slot),
		hookEntry:  starlark.NewBuiltin(hookEntry, st.entry),
	}
	st.universe(d)
	return d
}

func (st *execState) routeBuiltin(route string) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var query string
		k := DefaultK
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "query", &query, "k?", &k); err != nil {
			return nil, newErr(CodeRuntime, ErrBadArgument, "%v", err)
		}
		docs, err := st.search(route, query, k)
		if err != nil {
			return nil, err
		}
		return docList(docs), nil
	}
}

func (st *execState) fuse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	k := starlark.Value(starlark.None)
	for _, kv := range kwargs {
		if name, _ := starlark.AsString(kv[0]); name == "k" {
			k = kv[1]
		} else {
			return nil, newErr(CodeRuntime, ErrBadArgument, "fuse: unexpected keyword argument %s", kv[0])
		}
	}
	rrf := st.rt.cfg.RRFK
	if k != starlark.None {
		f, ok := starlark.AsFloat(k)
		if !ok {
			return nil, newErr(CodeRuntime, ErrBadArgument, "fuse: k must be a number, got %s", k.Type())
		}
		rrf = f
	}
	lists := []starlark.Value(args)
	if len(args) == 1 {
		if l, ok := args[0].(starlark.Indexable); ok && l.Len() > 0 {
			if _, inner := l.Index(0).(starlark.Indexable); inner {
				if _, isStr := l.Index(0).(starlark.String); !isStr {
					lists = make([]starlark.Value, l.Len())
					for i := range lists {
						lists[i] = l.Index(i)
					}
				}
			}
		}
	}
	in := make([][]Doc, len(lists))
	for i, l := range lists {
		d, err := toDocs("fuse", fmt.Sprintf("list %d", i+1), l)
		if err != nil {
			return nil, err
		}
		in[i] = d
	}
	out, err := Fuse(in, rrf)
	if err != nil {
		return nil, err
	}
	return docList(out), nil
}

func (st *execState) dedup(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "docs", &v); err != nil {
		return nil, newErr(CodeRuntime, ErrBadArgument, "%v", err)
	}
	docs, err := toDocs("dedup", "docs", v)
	if err != nil {
		return nil, err
	}
	out, err := Dedup(docs)
	if err != nil {
		return nil, err
	}
	return docList(out), nil
}

func (st *execState) rerank(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var query string
	var v starlark.Value
	k := -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "query", &query, "docs", &v, "k?", &k); err != nil {
		return nil, newErr(CodeRuntime, ErrBadArgument, "%v", err)
	}
	docs, err := toDocs("rerank", "docs", v)
	if err != nil {
		return nil, err
	}
	switch {
	case k == -1:
		k = len(docs)
	case k < 1:
		return nil, newErr(CodeRuntime, ErrBadArgument, "rerank: k = %d must be ≥ 1", k)
	case k > st.b.MaxWidth:
		return nil, newErr(CodeBudget, ErrBudget, "rerank: k = %d exceeds the cap of %d", k, st.b.MaxWidth)
	}
	if len(docs) > st.b.MaxRerankDocs {
		return nil, newErr(CodeBudget, ErrBudget, "rerank: %d documents exceed the cap of %d per call", len(docs), st.b.MaxRerankDocs)
	}
	if len(query) > DefaultMaxQueryBytes {
		return nil, newErr(CodeBudget, ErrBudget, "rerank: query of %d bytes exceeds the cap of %d", len(query), DefaultMaxQueryBytes)
	}
	st.stats.Reranks++
	out, err := st.rt.Rerank(st.ctx, query, docs, k)
	if err != nil {
		if st.ctx.Err() != nil {
			return nil, st.ctxErr() // the program's time ran out while the reranker ran
		}
		return nil, err
	}
	return docList(out), nil
}

func (st *execState) doc(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "id", &id); err != nil {
		return nil, newErr(CodeRuntime, ErrBadArgument, "%v", err)
	}
	d, ok := st.seen[id]
	if !ok {
		return nil, newErr(CodeUnknownDoc, ErrUnknownDoc, "doc: %q was not retrieved by this program", id)
	}
	return docValue{&d}, nil
}

// print renders documents (a Doc, or a list or tuple of Docs) in the
// observation format, counting them as printed evidence; anything else is
// printed as Python would (str of each argument joined by sep, then a newline).
func (st *execState) print(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sep := " "
	for _, kv := range kwargs {
		name, _ := starlark.AsString(kv[0])
		s, ok := starlark.AsString(kv[1])
		if name != "sep" || !ok {
			return nil, newErr(CodeRuntime, ErrBadArgument, "print: unexpected keyword argument %s (only sep=\"...\")", kv[0])
		}
		sep = s
	}
	if docs, ok := docArgs(args); ok {
		var sb strings.Builder
		for i, d := range docs {
			sb.WriteString(st.rt.formatDoc(st.stats.PrintedDocs+i+1, d))
		}
		if err := st.emit(sb.String(), docs); err != nil {
			return nil, err
		}
		return starlark.None, nil
	}
	var sb strings.Builder
	for i, a := range args {
		if i > 0 {
			sb.WriteString(sep)
		}
		s, ok := a.(starlark.String)
		if !ok {
			n, err := st.strSize(th, a, false, DefaultMaxObservationBytes)
			if err != nil {
				return nil, err
			}
			if uint64(sb.Len())+n > DefaultMaxObservationBytes {
				err := newErr(CodeBudget, ErrBudget, "observation budget exceeded: over %d bytes printed", DefaultMaxObservationBytes)
				st.cancel(err)
				return nil, err
			}
			s = starlark.String(a.String())
		}
		if sb.Len()+len(s) > DefaultMaxObservationBytes {
			err := newErr(CodeBudget, ErrBudget, "observation budget exceeded: over %d bytes printed", DefaultMaxObservationBytes)
			st.cancel(err)
			return nil, err
		}
		sb.WriteString(string(s))
	}
	sb.WriteByte('\n')
	if err := st.emit(sb.String(), nil); err != nil {
		return nil, err
	}
	return starlark.None, nil
}

// docArgs reports whether every argument is a Doc or a non-string sequence
// of Docs, with at least one argument, and flattens them.
func docArgs(args starlark.Tuple) ([]Doc, bool) {
	if len(args) == 0 {
		return nil, false
	}
	var out []Doc
	for _, a := range args {
		switch v := a.(type) {
		case docValue:
			out = append(out, *v.d)
		case *starlark.List, starlark.Tuple:
			seq := v.(starlark.Indexable)
			for i := 0; i < seq.Len(); i++ {
				d, ok := seq.Index(i).(docValue)
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
