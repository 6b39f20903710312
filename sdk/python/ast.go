package python

import "math/big"

// Expr is an expression node; Stmt a statement node. Every node knows the
// 1-based source line it starts on.
type Expr interface{ exprLine() int }

type Stmt interface{ stmtLine() int }

type pos struct{ Line int }

func (p pos) exprLine() int { return p.Line }
func (p pos) stmtLine() int { return p.Line }

type (
	Name struct {
		pos
		ID string
	}
	IntLit struct {
		pos
		V   int64
		Big *big.Int
	}
	FloatLit struct {
		pos
		V float64
	}
	StrLit struct {
		pos
		V string
	}
	NoneLit struct{ pos }
	BoolLit struct {
		pos
		V bool
	}
	EllipsisLit struct{ pos }
	// FString is an f-string (with adjacent literals joined in).
	FString struct {
		pos
		Parts []FPart
	}
	BinOp struct {
		pos
		Op   string
		X, Y Expr
	}
	UnaryOp struct {
		pos
		Op string // - + ~ not
		X  Expr
	}
	BoolOp struct {
		pos
		Op   string // and, or
		X, Y Expr
	}
	Compare struct {
		pos
		First Expr
		Ops   []string // < > == >= <= != in "not in" is "is not"
		Rest  []Expr
	}
	Call struct {
		pos
		Fn   Expr
		Args []Arg
	}
	Attr struct {
		pos
		X    Expr
		Name string
	}
	Subscript struct {
		pos
		X     Expr
		Index Expr
	}
	SliceExpr struct {
		pos
		Lo, Hi, Step Expr // nil when absent
	}
	ListExpr struct {
		pos
		Elts []Expr
	}
	TupleExpr struct {
		pos
		Elts []Expr
	}
	SetExpr struct {
		pos
		Elts []Expr
	}
	DictExpr struct {
		pos
		Keys   []Expr // nil key: **Values[i]
		Values []Expr
	}
	// Comp is a comprehension: Kind is list, set, dict or gen.
	Comp struct {
		pos
		Kind    string
		Elt     Expr // list/set/gen element, dict key
		Val     Expr // dict value
		Clauses []CompClause
	}
	Lambda struct {
		pos
		Fn *FuncDef
	}
	IfExp struct {
		pos
		Cond, Then, Else Expr
	}
	Starred struct {
		pos
		X Expr
	}
	NamedExpr struct {
		pos
		Name string
		X    Expr
	}
)

// FPart is a literal piece (Expr nil) or a replacement field of an f-string.
type FPart struct {
	Lit  string
	Expr Expr
	Text string  // the expression's source (for f"{x=}")
	Conv byte    // 0, 'r', 's', 'a'
	Spec []FPart // the format spec, itself possibly with nested fields
}

// Arg is one call argument: positional, *Star, **DStar or Name=Value.
type Arg struct {
	Name  string
	Star  bool
	DStar bool
	Value Expr
}

// CompClause is a for (Target, Iter) clause with its if conditions.
type CompClause struct {
	Target Expr
	Iter   Expr
	Ifs    []Expr
}

type (
	ExprStmt struct {
		pos
		X Expr
	}
	Assign struct {
		pos
		Targets []Expr // a = b = v: two targets
		Value   Expr
	}
	AugAssign struct {
		pos
		Op     string // + - * ...
		Target Expr
		Value  Expr
	}
	If struct {
		pos
		Cond Expr
		Body []Stmt
		Else []Stmt
	}
	While struct {
		pos
		Cond Expr
		Body []Stmt
		Else []Stmt
	}
	For struct {
		pos
		Target Expr
		Iter   Expr
		Body   []Stmt
		Else   []Stmt
	}
	Break    struct{ pos }
	Continue struct{ pos }
	Pass     struct{ pos }
	Return   struct {
		pos
		X Expr // nil: None
	}
	Global struct {
		pos
		Names []string
	}
	Nonlocal struct {
		pos
		Names []string
	}
	Del struct {
		pos
		Targets []Expr
	}
	Assert struct {
		pos
		Cond Expr
		Msg  Expr
	}
	Raise struct {
		pos
		X     Expr // nil: re-raise
		Cause Expr
	}
	Try struct {
		pos
		Body     []Stmt
		Handlers []Handler
		Else     []Stmt
		Finally  []Stmt
	}
	// Import binds modules: import a, import a as b, from a import x as y.
	Import struct {
		pos
		Module string
		Names  [][2]string // from-import: (name, as); plain import: nil
		As     string
	}
	FuncDef struct {
		pos
		Name     string
		Params   []Param
		Body     []Stmt
		IsLambda bool
		// resolved by the compiler
	}
)

// Handler is one except clause; Type nil is a bare except.
type Handler struct {
	Line int
	Type Expr
	Name string
	Body []Stmt
}

// Param is one function parameter. Kind: "" positional-or-keyword, "*"
// varargs, "**" kwargs, "kwonly".
type Param struct {
	Name    string
	Default Expr
	Kind    string
}

// File is a parsed program.
type File struct {
	Body []Stmt
}
