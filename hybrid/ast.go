package hybrid

import (
	"errors"
	"fmt"

	"github.com/rlsearch/rlsearch"
)

// Expr is a node of a parsed WHERE expression. The concrete types are
// *Logic, *Not, *Cmp, *InList, *Between, *Like, *IsNull and *InSet.
// Trees are built by Parse (or by the generator) and not modified after
// Check; they are then safe to share between goroutines.
type Expr interface {
	// Pos is the 0-based byte offset of the node in the source text.
	Pos() int
}

// Logic is an n-ary AND or OR (Args has at least two entries).
type Logic struct {
	Op   string // "AND" or "OR"
	Args []Expr
	At   int
}

// Not is NOT X.
type Not struct {
	X  Expr
	At int
}

// Operand is the left side of a predicate: a column, optionally wrapped
// in one whitelisted function (LOWER, UPPER, LENGTH).
type Operand struct {
	Func   string // "", "LOWER", "UPPER" or "LENGTH"
	Column string // as written; Check replaces it with the schema spelling
	At     int
}

// Value is a literal: a string, an integer or a real.
type Value struct {
	Kind int // ValString, ValInt or ValReal
	S    string
	I    int64
	F    float64
	At   int
}

// Literal kinds.
const (
	ValString = iota + 1
	ValInt
	ValReal
)

// Cmp is Left Op Right with Op one of = != < <= > >=.
type Cmp struct {
	Left  Operand
	Op    string
	Right Value
}

// InList is Left [NOT] IN (v1, v2, ...).
type InList struct {
	Left   Operand
	Negate bool
	Values []Value
}

// Between is Left [NOT] BETWEEN Lo AND Hi.
type Between struct {
	Left   Operand
	Negate bool
	Lo, Hi Value
}

// Like is Left [NOT] LIKE Pattern (SQLite semantics: % and _ wildcards,
// ASCII case-insensitive, no ESCAPE).
type Like struct {
	Left    Operand
	Negate  bool
	Pattern Value
}

// IsNull is Left IS [NOT] NULL.
type IsNull struct {
	Left   Operand
	Negate bool
}

// InSet is idcol [NOT] IN <kind_index>: membership in the top-K set of
// the retrieval_list entry the placeholder stands for.
type InSet struct {
	Column string
	Negate bool
	Kind   string // "text" or "image"
	Index  int
	At     int
}

func (e *Logic) Pos() int   { return e.At }
func (e *Not) Pos() int     { return e.At }
func (e *Cmp) Pos() int     { return e.Left.At }
func (e *InList) Pos() int  { return e.Left.At }
func (e *Between) Pos() int { return e.Left.At }
func (e *Like) Pos() int    { return e.Left.At }
func (e *IsNull) Pos() int  { return e.Left.At }
func (e *InSet) Pos() int   { return e.At }

// Placeholder returns the placeholder text, such as "<text_0>".
func (e *InSet) Placeholder() string { return fmt.Sprintf("<%s_%d>", e.Kind, e.Index) }

// Errors of programs. Every *Error wraps one of these and rlsearch.ErrBadInput.
var (
	// ErrSyntax: the text is not a WHERE expression of the DSL.
	ErrSyntax = errors.New("hybrid: syntax error")
	// ErrRejected: the text uses something the DSL forbids (a second
	// statement, comments, subqueries, UNION, ATTACH, PRAGMA, functions
	// outside the whitelist, ...).
	ErrRejected = errors.New("hybrid: rejected")
	// ErrCheck: the expression does not fit the schema or the
	// retrieval_list (unknown column, type mismatch, placeholder numbering).
	ErrCheck = errors.New("hybrid: check failed")
	// ErrLimit: a size limit was exceeded (see Limits).
	ErrLimit = errors.New("hybrid: limit exceeded")
)

// Error is a program error with its position. Pos is a 0-based byte offset
// into the sql text, or -1 when the error is not about one place (for
// example a retrieval_list entry; Field then names it).
type Error struct {
	Kind  error
	Pos   int
	Field string // JSON field at fault: "sql", "retrieval_list[1].field", ...
	Msg   string
}

func (e *Error) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("%v at %s position %d: %s", e.Kind, e.Field, e.Pos, e.Msg)
	}
	return fmt.Sprintf("%v in %s: %s", e.Kind, e.Field, e.Msg)
}

// Unwrap lets errors.Is match Kind and rlsearch.ErrBadInput.
func (e *Error) Unwrap() []error { return []error{e.Kind, rlsearch.ErrBadInput} }

func errAt(kind error, pos int, format string, a ...any) *Error {
	return &Error{Kind: kind, Pos: pos, Field: "sql", Msg: fmt.Sprintf(format, a...)}
}

// Limits bound what Parse and Check accept; they protect the server from
// huge or pathological programs. Zero fields mean the defaults below
// (chosen well above anything the paper's programs use: at most 5 leaves,
// two levels of nesting).
type Limits struct {
	MaxSQLBytes     int     // default 4096
	MaxStringBytes  int     // one string literal, default 512
	MaxNumberDigits int     // characters of one numeric literal, default 32
	MaxAbsNumber    float64 // largest |literal|, default 1e15 (exact in float64)
	MaxNodes        int     // AST nodes, default 256
	MaxDepth        int     // nesting of parentheses and NOT, default 32
	MaxInList       int     // values in one IN list, default 256
	MaxRetrievals   int     // retrieval_list entries, default 16
	MaxQueryBytes   int     // one retrieval query, default 1024
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxSQLBytes, 4096)
	def(&l.MaxStringBytes, 512)
	def(&l.MaxNumberDigits, 32)
	def(&l.MaxNodes, 256)
	def(&l.MaxDepth, 32)
	def(&l.MaxInList, 256)
	def(&l.MaxRetrievals, 16)
	def(&l.MaxQueryBytes, 1024)
	if l.MaxAbsNumber <= 0 {
		l.MaxAbsNumber = 1e15
	}
	return l
}
