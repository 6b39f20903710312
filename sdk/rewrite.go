package sdk

import (
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Hook names the rewriter calls. They are predeclared for every program and
// contain "·", which no Starlark identifier can, so a program can neither
// shadow nor call them by name.
const (
	hookBin   = "·bin"   // ·bin(op, x, y): x op y, charged (binaryCost)
	hookAug   = "·aug"   // ·aug(op, x, y): x op= y for a plain name (in place for lists and dicts)
	hookGrow  = "·grow"  // ·grow(op, y): y, charging the growth of a[i] op= y
	hookAttr  = "·attr"  // ·attr(x, name): x.name, with methods that allocate or scan charged
	hookSlice = "·slice" // ·slice(x, lo, hi, step): x[lo:hi:step], charged
	hookSlot  = "·slot"  // ·slot(v): v, charging one comprehension element
	hookEntry = "·entry" // ·entry(v): v, charging one dict-comprehension entry
)

// chargedOps are the binary operators routed through ·bin: those that can
// allocate in proportion to their operands (+ * % | & ^ << -) and those
// that scan them (in, not in). and/or short-circuit and comparisons
// allocate nothing, so they stay opcodes.
var chargedOps = map[syntax.Token]bool{
	syntax.PLUS: true, syntax.MINUS: true, syntax.STAR: true, syntax.PERCENT: true,
	syntax.PIPE: true, syntax.AMP: true, syntax.CIRCUMFLEX: true, syntax.LTLT: true,
	syntax.IN: true, syntax.NOT_IN: true,
}

// augOps maps an augmented assignment token to its binary operator.
var augOps = map[syntax.Token]syntax.Token{
	syntax.PLUS_EQ: syntax.PLUS, syntax.MINUS_EQ: syntax.MINUS, syntax.STAR_EQ: syntax.STAR,
	syntax.SLASH_EQ: syntax.SLASH, syntax.SLASHSLASH_EQ: syntax.SLASHSLASH, syntax.PERCENT_EQ: syntax.PERCENT,
	syntax.AMP_EQ: syntax.AMP, syntax.PIPE_EQ: syntax.PIPE, syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX,
	syntax.LTLT_EQ: syntax.LTLT, syntax.GTGT_EQ: syntax.GTGT,
}

// rewriteFile routes every operation of a parsed program that can allocate
// or scan in proportion to its operands through a charging hook (see
// meter.go), so that its cost is checked against the program's memory and
// step budgets before it runs. Semantics are unchanged: each hook performs
// the operation the node stood for (Starlark's own Binary, Getattr, Slice).
// Positions are kept, so error lines still point at the operator.
func rewriteFile(f *syntax.File) {
	rwStmts(f.Stmts)
}

func rwStmts(ss []syntax.Stmt) {
	for _, s := range ss {
		rwStmt(s)
	}
}

func rwStmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		s.RHS = rwExpr(s.RHS)
		s.LHS = rwTarget(s.LHS)
		if op, ok := augOps[s.Op]; ok {
			if cur, ok := pureTarget(s.LHS); ok {
				// x op= y, a[i] op= y with a and i names or literals:
				// evaluating the target twice is side-effect free.
				s.RHS = hookCall(hookAug, s.OpPos, opLit(op, s.OpPos), cur, s.RHS)
				s.Op = syntax.EQ
			} else {
				s.RHS = hookCall(hookGrow, s.OpPos, opLit(op, s.OpPos), s.RHS)
			}
		} else if _, isIndex := s.LHS.(*syntax.IndexExpr); isIndex {
			// d[k] = v may add a dict entry: charged as one (an
			// over-charge for list element assignment, which adds none).
			s.RHS = hookCall(hookEntry, s.OpPos, s.RHS)
		}
	case *syntax.ExprStmt:
		s.X = rwExpr(s.X)
	case *syntax.IfStmt:
		s.Cond = rwExpr(s.Cond)
		rwStmts(s.True)
		rwStmts(s.False)
	case *syntax.ForStmt:
		s.X = rwExpr(s.X)
		s.Vars = rwTarget(s.Vars)
		rwStmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = rwExpr(s.Cond)
		rwStmts(s.Body)
	case *syntax.DefStmt:
		rwParams(s.Params)
		rwStmts(s.Body)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = rwExpr(s.Result)
		}
	}
}

// pureTarget returns a fresh read of an augmented assignment's target when
// reading it again has no side effects: a name, or a[i] where a is a name
// and i a name or a literal.
func pureTarget(e syntax.Expr) (syntax.Expr, bool) {
	switch e := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: e.NamePos, Name: e.Name}, true
	case *syntax.IndexExpr:
		a, ok := e.X.(*syntax.Ident)
		if !ok {
			return nil, false
		}
		var i syntax.Expr
		switch y := e.Y.(type) {
		case *syntax.Ident:
			i = &syntax.Ident{NamePos: y.NamePos, Name: y.Name}
		case *syntax.Literal:
			c := *y
			i = &c
		default:
			return nil, false
		}
		return &syntax.IndexExpr{X: &syntax.Ident{NamePos: a.NamePos, Name: a.Name}, Lbrack: e.Lbrack, Y: i, Rbrack: e.Rbrack}, true
	}
	return nil, false
}

// rwParams rewrites parameter defaults (name=expr).
func rwParams(ps []syntax.Expr) {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = rwExpr(b.Y)
		}
	}
}

// rwTarget rewrites the subexpressions of an assignment target, keeping
// the target itself (a name, a[i], a.f, or a tuple or list of them).
func rwTarget(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.TupleExpr:
		for i := range e.List {
			e.List[i] = rwTarget(e.List[i])
		}
	case *syntax.ListExpr:
		for i := range e.List {
			e.List[i] = rwTarget(e.List[i])
		}
	case *syntax.ParenExpr:
		e.X = rwTarget(e.X)
	case *syntax.IndexExpr:
		e.X = rwExpr(e.X)
		e.Y = rwExpr(e.Y)
	case *syntax.DotExpr:
		e.X = rwExpr(e.X)
	}
	return e
}

func rwExprs(es []syntax.Expr) {
	for i := range es {
		es[i] = rwExpr(es[i])
	}
}

func rwExpr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X = rwExpr(e.X)
		e.Y = rwExpr(e.Y)
		if chargedOps[e.Op] {
			return hookCall(hookBin, e.OpPos, opLit(e.Op, e.OpPos), e.X, e.Y)
		}
	case *syntax.CallExpr:
		e.Fn = rwExpr(e.Fn)
		for i, a := range e.Args {
			switch a := a.(type) {
			case *syntax.BinaryExpr:
				if a.Op == syntax.EQ { // keyword argument
					a.Y = rwExpr(a.Y)
					continue
				}
			case *syntax.UnaryExpr:
				if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
					a.X = rwExpr(a.X)
					continue
				}
			}
			e.Args[i] = rwExpr(a)
		}
	case *syntax.Comprehension:
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.X = rwExpr(c.X)
				c.Vars = rwTarget(c.Vars)
			case *syntax.IfClause:
				c.Cond = rwExpr(c.Cond)
			}
		}
		if de, ok := e.Body.(*syntax.DictEntry); ok {
			de.Key = rwExpr(de.Key)
			de.Value = hookCall(hookEntry, e.Lbrack, rwExpr(de.Value))
		} else {
			e.Body = hookCall(hookSlot, e.Lbrack, rwExpr(e.Body))
		}
	case *syntax.CondExpr:
		e.Cond = rwExpr(e.Cond)
		e.True = rwExpr(e.True)
		e.False = rwExpr(e.False)
	case *syntax.DictExpr:
		for _, de := range e.List {
			de := de.(*syntax.DictEntry)
			de.Key = rwExpr(de.Key)
			de.Value = rwExpr(de.Value)
		}
	case *syntax.DotExpr:
		return hookCall(hookAttr, e.Dot, rwExpr(e.X), hookStr(e.Name.Name, e.NamePos))
	case *syntax.IndexExpr:
		e.X = rwExpr(e.X)
		e.Y = rwExpr(e.Y)
	case *syntax.LambdaExpr:
		rwParams(e.Params)
		e.Body = rwExpr(e.Body)
	case *syntax.ListExpr:
		rwExprs(e.List)
	case *syntax.TupleExpr:
		rwExprs(e.List)
	case *syntax.ParenExpr:
		e.X = rwExpr(e.X)
	case *syntax.SliceExpr:
		opt := func(x syntax.Expr) syntax.Expr {
			if x == nil {
				return &syntax.Ident{NamePos: e.Lbrack, Name: "None"}
			}
			return rwExpr(x)
		}
		return hookCall(hookSlice, e.Lbrack, rwExpr(e.X), opt(e.Lo), opt(e.Hi), opt(e.Step))
	case *syntax.UnaryExpr:
		if e.X != nil {
			e.X = rwExpr(e.X)
		}
	}
	return e
}

func hookCall(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: name}, Lparen: pos, Args: args, Rparen: pos}
}

func opLit(op syntax.Token, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.INT, TokenPos: pos, Raw: strconv.Itoa(int(op)), Value: int64(op)}
}

func hookStr(s string, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: pos, Raw: strconv.Quote(s), Value: s}
}

// compileProgram parses src, routes its allocating operations through the
// charging hooks (rewriteFile) and compiles it against predeclared.
func compileProgram(src string, predeclared starlark.StringDict) (*starlark.Program, error) {
	f, err := fileOptions.Parse(programFile, src, 0)
	if err != nil {
		return nil, err
	}
	rewriteFile(f)
	return starlark.FileProgram(f, predeclared.Has)
}
