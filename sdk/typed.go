package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.starlark.net/syntax"
)

// Mode is the retrieval mode of a typed program.
type Mode uint8

// Modes of the typed grammar (RPL Section 3): dense (E5) only, sparse
// (BM25) only, or both routes for every query, fused.
const (
	ModeDense Mode = iota + 1
	ModeSparse
	ModeFuse
)

// Ladders and limits of the typed grammar (RPL Section 3, Appendix B).
var (
	Widths       = []int{3, 5, 10, 20, 50}
	RerankWidths = []int{0, 3, 5, 10, 20}
)

const (
	MaxQueries = 4  // distinct queries per typed program
	MaxPrint   = 20 // printed documents per typed program
)

func (m Mode) String() string {
	switch m {
	case ModeDense:
		return "dense"
	case ModeSparse:
		return "sparse"
	case ModeFuse:
		return "fuse"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// MarshalText encodes the mode as "dense", "sparse" or "fuse".
func (m Mode) MarshalText() ([]byte, error) {
	if m < ModeDense || m > ModeFuse {
		return nil, fmt.Errorf("sdk: invalid mode %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes "dense", "sparse" or "fuse".
func (m *Mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "dense":
		*m = ModeDense
	case "sparse":
		*m = ModeSparse
	case "fuse":
		*m = ModeFuse
	default:
		return fmt.Errorf("sdk: mode %q is not dense, sparse or fuse", b)
	}
	return nil
}

// Program is a typed retrieval program, the RPL mutation grammar:
//
//	U(p) ⊆ 2^Q × {dense, sparse, fuse} × {3,5,10,20,50} × {0,3,5,10,20}
//
// It runs, for every query in order, a dense call, a sparse call, or both
// (Mode), each of width Width; several calls are fused by RRF (k = 60);
// with Rerank > 0 the result is reranked for Queries[0] keeping Rerank
// documents; the first Print documents are printed. Its canonical source
// is Source(); Recognize reads such source back.
type Program struct {
	Queries []string `json:"queries"`
	Mode    Mode     `json:"mode"`
	Width   int      `json:"width"`
	Rerank  int      `json:"rerank"`
	Print   int      `json:"print"`
}

// Calls is the number of retrieval calls (queries × routes).
func (p Program) Calls() int {
	if p.Mode == ModeFuse {
		return 2 * len(p.Queries)
	}
	return len(p.Queries)
}

// Validate checks the typed grammar: 1..4 distinct non-blank queries (no
// duplicate calls), a known mode, Width on the width ladder, Rerank on the
// rerank ladder and at most the candidates retrieved, 1 ≤ Print ≤ 20 and
// at most what is kept (Rerank when reranking, else the candidates).
// Errors wrap ErrNotTyped and name the field.
func (p Program) Validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrNotTyped, fmt.Sprintf(format, a...))
	}
	if len(p.Queries) == 0 || len(p.Queries) > MaxQueries {
		return bad("Program.Queries has %d queries, want 1..%d", len(p.Queries), MaxQueries)
	}
	for i, q := range p.Queries {
		if strings.TrimSpace(q) == "" {
			return bad("Program.Queries[%d] is blank", i)
		}
		if len(q) > DefaultMaxQueryBytes {
			return bad("Program.Queries[%d] is %d bytes, over %d", i, len(q), DefaultMaxQueryBytes)
		}
		if slices.Index(p.Queries[:i], q) >= 0 {
			return bad("Program.Queries[%d] %q repeats an earlier query (duplicate calls are not allowed)", i, q)
		}
	}
	if p.Mode < ModeDense || p.Mode > ModeFuse {
		return bad("Program.Mode %d is not dense, sparse or fuse", uint8(p.Mode))
	}
	if !slices.Contains(Widths, p.Width) {
		return bad("Program.Width %d is not on the ladder %v", p.Width, Widths)
	}
	if !slices.Contains(RerankWidths, p.Rerank) {
		return bad("Program.Rerank %d is not on the ladder %v", p.Rerank, RerankWidths)
	}
	cands := p.Calls() * p.Width
	if p.Rerank > cands {
		return bad("Program.Rerank %d keeps more documents than the %d retrieved", p.Rerank, cands)
	}
	keep := cands
	if p.Rerank > 0 {
		keep = p.Rerank
	}
	if p.Print < 1 || p.Print > MaxPrint || p.Print > keep {
		return bad("Program.Print %d must be in 1..%d (documents kept: %d, cap %d)", p.Print, min(keep, MaxPrint), keep, MaxPrint)
	}
	return nil
}

type call struct {
	route, query string
	k            int
}

// calls lists the retrieval calls in source order: per query, dense then sparse.
func (p Program) calls() []call {
	var cs []call
	for _, q := range p.Queries {
		if p.Mode != ModeSparse {
			cs = append(cs, call{RouteDense, q, p.Width})
		}
		if p.Mode != ModeDense {
			cs = append(cs, call{RouteSparse, q, p.Width})
		}
	}
	return cs
}

// Source renders the canonical program. For a valid p,
// Recognize(p.Source()) == p. Example (Mode fuse, two queries):
//
//	docs = fuse([
//	    dense("q1", k=20),
//	    sparse("q1", k=20),
//	    dense("q2", k=20),
//	    sparse("q2", k=20),
//	])
//	docs = rerank("q1", docs, k=5)
//	print(docs[:3])
func (p Program) Source() string {
	var sb strings.Builder
	cs := p.calls()
	callSrc := func(c call) string { return fmt.Sprintf("%s(%s, k=%d)", c.route, syntax.Quote(c.query, false), c.k) }
	if len(cs) == 1 {
		fmt.Fprintf(&sb, "docs = %s\n", callSrc(cs[0]))
	} else {
		sb.WriteString("docs = fuse([\n")
		for _, c := range cs {
			fmt.Fprintf(&sb, "    %s,\n", callSrc(c))
		}
		sb.WriteString("])\n")
	}
	if p.Rerank > 0 {
		fmt.Fprintf(&sb, "docs = rerank(%s, docs, k=%d)\n", syntax.Quote(p.Queries[0], false), p.Rerank)
	}
	fmt.Fprintf(&sb, "print(docs[:%d])\n", p.Print)
	return sb.String()
}

// sym is the symbolic value of an expression in a program being recognised.
type sym struct {
	calls  []call // retrieval calls feeding it
	fused  bool
	rerank int    // 0 = not reranked
	rq     string // rerank query
	slice  int    // 0 = not sliced
}

// Recognize reads a program back into the typed form. It accepts the
// canonical source and the same structure written differently: any
// variable names, comments, calls bound to variables first, fuse(a, b) or
// fuse([a, b]), positional or keyword k, print(x[:n]) or print(reranked).
// The rerank query must be one of the retrieval queries (it becomes
// Queries[0]); everything else (loops, other builtins, RRF k other than
// 60, mixed widths, a query dense-only and another sparse-only) is an error
// wrapping ErrNotTyped with the reason.
func Recognize(src string) (Program, error) {
	notTyped := func(format string, a ...any) (Program, error) {
		return Program{}, fmt.Errorf("%w: %s", ErrNotTyped, fmt.Sprintf(format, a...))
	}
	if len(src) > DefaultMaxSourceBytes {
		return notTyped("source is %d bytes", len(src))
	}
	f, err := fileOptions.Parse(programFile, src, 0)
	if err != nil {
		return notTyped("does not parse: %v", err)
	}
	env := map[string]sym{}
	var printed *sym
	for _, stmt := range f.Stmts {
		if printed != nil {
			return notTyped("line %d: statement after print", stmtLine(stmt))
		}
		switch s := stmt.(type) {
		case *syntax.AssignStmt:
			id, ok := s.LHS.(*syntax.Ident)
			if !ok || s.Op != syntax.EQ {
				return notTyped("line %d: only `name = expression` assignments", stmtLine(stmt))
			}
			v, err := symEval(s.RHS, env)
			if err != nil {
				return Program{}, err
			}
			env[id.Name] = v
		case *syntax.ExprStmt:
			c, ok := s.X.(*syntax.CallExpr)
			if !ok || identName(c.Fn) != "print" || len(c.Args) != 1 {
				return notTyped("line %d: only print(documents) as an expression statement", stmtLine(stmt))
			}
			v, err := symEval(c.Args[0], env)
			if err != nil {
				return Program{}, err
			}
			printed = &v
		default:
			return notTyped("line %d: %T is not in the typed subset", stmtLine(stmt), stmt)
		}
	}
	if printed == nil {
		return notTyped("the program prints nothing")
	}
	return fromSym(*printed)
}

func fromSym(v sym) (Program, error) {
	notTyped := func(format string, a ...any) (Program, error) {
		return Program{}, fmt.Errorf("%w: %s", ErrNotTyped, fmt.Sprintf(format, a...))
	}
	if len(v.calls) == 0 {
		return notTyped("nothing retrieved")
	}
	if len(v.calls) > 1 && !v.fused {
		return notTyped("several retrieval calls must be fused")
	}
	var p Program
	routes := map[string][]string{}
	width := v.calls[0].k
	for _, c := range v.calls {
		if c.k != width {
			return notTyped("calls have different widths (%d and %d)", width, c.k)
		}
		if slices.Contains(routes[c.query], c.route) {
			return notTyped("duplicate call %s(%q, k=%d)", c.route, c.query, c.k)
		}
		if routes[c.query] == nil {
			p.Queries = append(p.Queries, c.query)
		}
		routes[c.query] = append(routes[c.query], c.route)
	}
	for i, q := range p.Queries {
		var m Mode
		switch rs := routes[q]; {
		case len(rs) == 2:
			m = ModeFuse
		case rs[0] == RouteDense:
			m = ModeDense
		default:
			m = ModeSparse
		}
		if i > 0 && m != p.Mode {
			return notTyped("queries use different modes (%v and %v)", p.Mode, m)
		}
		p.Mode = m
	}
	p.Width = width
	if v.rerank > 0 {
		i := slices.Index(p.Queries, v.rq)
		if i < 0 {
			return notTyped("rerank query %q is not one of the retrieval queries", v.rq)
		}
		p.Queries = append([]string{v.rq}, slices.Delete(slices.Clone(p.Queries), i, i+1)...)
		p.Rerank = v.rerank
	}
	switch {
	case v.slice > 0:
		p.Print = v.slice
	case v.rerank > 0:
		p.Print = v.rerank
	case len(v.calls) == 1:
		p.Print = width
	default:
		return notTyped("a fused list must be printed with a slice, print(docs[:n])")
	}
	if p.Rerank > 0 && p.Print > p.Rerank {
		p.Print = p.Rerank // print(docs[:n]) of k reranked documents prints k
	}
	if err := p.Validate(); err != nil {
		return Program{}, err
	}
	return p, nil
}

func stmtLine(s syntax.Stmt) int32 {
	start, _ := s.Span()
	return start.Line
}

func identName(e syntax.Expr) string {
	if id, ok := e.(*syntax.Ident); ok {
		return id.Name
	}
	return ""
}

func symEval(e syntax.Expr, env map[string]sym) (sym, error) {
	line := func() int32 { start, _ := e.Span(); return start.Line }
	notTyped := func(format string, a ...any) (sym, error) {
		return sym{}, fmt.Errorf("%w: line %d: %s", ErrNotTyped, line(), fmt.Sprintf(format, a...))
	}
	switch x := e.(type) {
	case *syntax.ParenExpr:
		return symEval(x.X, env)
	case *syntax.Ident:
		v, ok := env[x.Name]
		if !ok {
			return notTyped("%s is not a variable bound earlier", x.Name)
		}
		return v, nil
	case *syntax.SliceExpr:
		if x.Lo != nil || x.Step != nil || x.Hi == nil {
			return notTyped("only x[:n] slices")
		}
		n, ok := intLit(x.Hi)
		if !ok || n < 1 {
			return notTyped("slice bound must be a positive integer literal")
		}
		v, err := symEval(x.X, env)
		if err != nil {
			return v, err
		}
		if v.slice > 0 {
			return notTyped("slice of a slice")
		}
		v.slice = n
		return v, nil
	case *syntax.CallExpr:
		fn := identName(x.Fn)
		pos, kw, err := splitArgs(x.Args)
		if err != nil {
			return notTyped("%v", err)
		}
		switch fn {
		case "dense", "sparse":
			if len(pos) < 1 || len(pos)+len(kw) > 2 {
				return notTyped("%s(query, k=width)", fn)
			}
			q, ok := strLit(pos[0])
			if !ok {
				return notTyped("%s query must be a string literal", fn)
			}
			kx := kw["k"]
			if len(pos) == 2 {
				kx = pos[1]
			}
			k := DefaultK
			if kx != nil {
				if k, ok = intLit(kx); !ok {
					return notTyped("%s width must be an integer literal", fn)
				}
			} else if len(kw) > 0 {
				return notTyped("%s takes only k=", fn)
			}
			return sym{calls: []call{{fn, q, k}}}, nil
		case "fuse":
			if kx, ok := kw["k"]; ok {
				if k, ok := intLit(kx); !ok || k != DefaultRRFK {
					return notTyped("fuse with an RRF k other than %d", DefaultRRFK)
				}
				delete(kw, "k")
			}
			if len(kw) > 0 {
				return notTyped("fuse takes only k=")
			}
			if len(pos) == 1 {
				if l, ok := pos[0].(*syntax.ListExpr); ok {
					pos = l.List
				}
			}
			var out sym
			for _, a := range pos {
				v, err := symEval(a, env)
				if err != nil {
					return v, err
				}
				if v.fused || v.rerank > 0 || v.slice > 0 {
					return notTyped("fuse of a list that is not a plain retrieval call")
				}
				out.calls = append(out.calls, v.calls...)
			}
			if len(out.calls) < 2 {
				return notTyped("fuse of fewer than two retrieval calls")
			}
			out.fused = true
			return out, nil
		case "rerank":
			if len(pos) < 2 || len(pos)+len(kw) != 3 {
				return notTyped("rerank(query, docs, k=n)")
			}
			q, ok := strLit(pos[0])
			if !ok {
				return notTyped("rerank query must be a string literal")
			}
			kx := kw["k"]
			if len(pos) == 3 {
				kx = pos[2]
			}
			k, ok := intLit(kx)
			if !ok {
				return notTyped("rerank k must be an integer literal")
			}
			v, err := symEval(pos[1], env)
			if err != nil {
				return v, err
			}
			if v.rerank > 0 || v.slice > 0 {
				return notTyped("rerank of a reranked or sliced list")
			}
			v.rerank, v.rq = k, q
			return v, nil
		}
		return notTyped("call of %s is not in the typed subset", syntaxString(x.Fn))
	}
	return notTyped("%T is not in the typed subset", e)
}

func syntaxString(e syntax.Expr) string {
	if n := identName(e); n != "" {
		return n
	}
	return fmt.Sprintf("%T", e)
}

func splitArgs(args []syntax.Expr) (pos []syntax.Expr, kw map[string]syntax.Expr, err error) {
	kw = map[string]syntax.Expr{}
	for _, a := range args {
		if b, ok := a.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			name := identName(b.X)
			if _, dup := kw[name]; dup || name == "" {
				return nil, nil, errors.New("bad keyword argument")
			}
			kw[name] = b.Y
			continue
		}
		if len(kw) > 0 {
			return nil, nil, errors.New("positional argument after keyword")
		}
		if u, ok := a.(*syntax.UnaryExpr); ok && (u.Op == syntax.STAR || u.Op == syntax.STARSTAR) {
			return nil, nil, errors.New("*args and **kwargs are not in the typed subset")
		}
		pos = append(pos, a)
	}
	return pos, kw, nil
}

func strLit(e syntax.Expr) (string, bool) {
	if l, ok := e.(*syntax.Literal); ok && l.Token == syntax.STRING {
		s, ok := l.Value.(string)
		return s, ok
	}
	return "", false
}

func intLit(e syntax.Expr) (int, bool) {
	if l, ok := e.(*syntax.Literal); ok && l.Token == syntax.INT {
		if n, ok := l.Value.(int64); ok && n >= 0 && n <= 1<<30 {
			return int(n), true
		}
	}
	return 0, false
}

// Evaluate runs a typed program with the Go primitives, without Starlark:
// the oracle of the program runtime and a fast path for the mutation
// verifier. It returns the printed documents, the observation text exactly
// as running p.Source() prints it (or the same budget error when the
// printed documents exceed the observation token cap), and the stats
// (RetrievalCalls, Candidates, Reranks, PrintedDocs, PrintedTokens; Steps
// is 0). Budgets are the
// runtime's.
func (rt *Runtime) Evaluate(ctx context.Context, p Program, cache *Cache) ([]Doc, string, Stats, error) {
	var st Stats
	if err := p.Validate(); err != nil {
		return nil, "", st, err
	}
	var lists [][]Doc
	for _, c := range p.calls() {
		d, err := rt.Search(ctx, c.route, c.query, c.k, cache)
		if err != nil {
			return nil, "", st, err
		}
		st.RetrievalCalls++
		st.Candidates += len(d)
		lists = append(lists, d)
	}
	docs := lists[0]
	if len(lists) > 1 {
		var err error
		if docs, err = Fuse(lists, rt.cfg.RRFK); err != nil {
			return nil, "", st, err
		}
	}
	if p.Rerank > 0 {
		st.Reranks++
		var err error
		if docs, err = rt.Rerank(ctx, p.Queries[0], docs, p.Rerank); err != nil {
			return nil, "", st, err
		}
	}
	docs = docs[:min(p.Print, len(docs))]
	obs := FormatObservation(rt.cfg.DocFormat, docs)
	n := rt.cfg.Tokens.CountTokens(obs)
	if n > rt.cfg.Budgets.MaxObservationTokens {
		return nil, "", st, newErr(CodeBudget, ErrBudget, "observation budget exceeded: printing this would make %d tokens, the cap is %d", n, rt.cfg.Budgets.MaxObservationTokens)
	}
	st.PrintedDocs = len(docs)
	st.PrintedTokens = n
	return docs, obs, st, nil
}
