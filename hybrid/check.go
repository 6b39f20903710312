package hybrid

import (
	"fmt"
	"strings"
)

// Retrieval is one retrieval_list entry: Type "text" or "image", the field
// whose index answers it, and the query text. Vector, when set, is used as
// the query embedding instead of encoding Query (for image fields, whose
// query encoder is not part of this project).
type Retrieval struct {
	Type   string    `json:"type"`
	Field  string    `json:"field"`
	Query  string    `json:"query"`
	Vector []float32 `json:"vector,omitempty"`
}

// Program is the policy's output (ProRetrieval §3.1):
//
//	{"sql": "WHERE <conditions>", "retrieval_list": [{"type": "text"|"image", "field": "...", "query": "..."}]}
//
// The k-th entry of type text is <text_k>, the k-th of type image <image_k>.
type Program struct {
	SQL           string      `json:"sql"`
	RetrievalList []Retrieval `json:"retrieval_list"`
}

// Compiled is a parsed and checked program, ready to execute. It is
// immutable and safe for concurrent use.
type Compiled struct {
	Program Program
	// Expr is the checked AST; column names carry the schema's spelling.
	Expr Expr
	// Slot maps each retrieval_list index to its placeholder node.
	Slot []*InSet
	// Positive[i] reports whether entry i's placeholder sits under an even
	// number of negations (NOT, NOT IN): its rank then feeds the ranking.
	Positive []bool
	// Field[i] is the resolved field index of entry i (into Schema.Text or
	// Schema.Image by its type).
	Field []int
}

// Compile parses p.SQL and checks it against s and p.RetrievalList.
// Errors are *Error values (ErrSyntax, ErrRejected, ErrLimit, ErrCheck).
// Safe for concurrent use.
func Compile(s *Schema, p Program, lim Limits) (*Compiled, error) {
	lim = lim.withDefaults()
	e, err := Parse(p.SQL, lim)
	if err != nil {
		return nil, err
	}
	return Check(s, e, p, lim)
}

// Check validates an AST against the schema and the retrieval list: known
// columns only (text and image fields are reachable only through
// placeholders), type-compatible literals, LIKE on TEXT only, placeholders
// only as <id> [NOT] IN <kind_i>, numbered 0, 1, ... per kind in order of
// appearance, each used once and matching the retrieval_list entries of its
// kind one-to-one, entry fields of the right kind. Check rewrites column
// names in e to the schema's spelling. p.SQL is not re-read.
func Check(s *Schema, e Expr, p Program, lim Limits) (*Compiled, error) {
	lim = lim.withDefaults()
	c := &checker{s: s}
	if err := c.walk(e, false); err != nil {
		return nil, err
	}
	if len(p.RetrievalList) > lim.MaxRetrievals {
		return nil, &Error{Kind: ErrLimit, Pos: -1, Field: "retrieval_list", Msg: fmt.Sprintf("%d entries, at most %d", len(p.RetrievalList), lim.MaxRetrievals)}
	}
	out := &Compiled{Program: p, Expr: e, Slot: make([]*InSet, len(p.RetrievalList)),
		Positive: make([]bool, len(p.RetrievalList)), Field: make([]int, len(p.RetrievalList))}
	count := map[string]int{}
	for i, r := range p.RetrievalList {
		fld := fmt.Sprintf("retrieval_list[%d]", i)
		var ok bool
		switch r.Type {
		case "text":
			out.Field[i], ok = s.textField(r.Field)
			if !ok {
				return nil, &Error{Kind: ErrCheck, Pos: -1, Field: fld + ".field", Msg: fmt.Sprintf("%q is not a text field (text fields: %s)", truncate(r.Field, 40), s.textNames())}
			}
		case "image":
			out.Field[i], ok = s.imageField(r.Field)
			if !ok {
				return nil, &Error{Kind: ErrCheck, Pos: -1, Field: fld + ".field", Msg: fmt.Sprintf("%q is not an image field (image fields: %s)", truncate(r.Field, 40), s.imageNames())}
			}
		default:
			return nil, &Error{Kind: ErrCheck, Pos: -1, Field: fld + ".type", Msg: fmt.Sprintf("type %q, want \"text\" or \"image\"", truncate(r.Type, 40))}
		}
		if strings.TrimSpace(r.Query) == "" && len(r.Vector) == 0 {
			return nil, &Error{Kind: ErrCheck, Pos: -1, Field: fld + ".query", Msg: "empty query"}
		}
		if len(r.Query) > lim.MaxQueryBytes {
			return nil, &Error{Kind: ErrLimit, Pos: -1, Field: fld + ".query", Msg: fmt.Sprintf("query of %d bytes is longer than %d", len(r.Query), lim.MaxQueryBytes)}
		}
		k := count[r.Type]
		count[r.Type]++
		if k >= len(c.slots[r.Type]) {
			return nil, &Error{Kind: ErrCheck, Pos: -1, Field: fld, Msg: fmt.Sprintf("entry is <%s_%d> but the sql never uses <%s_%d> (every retrieval_list entry needs its placeholder)", r.Type, k, r.Type, k)}
		}
		out.Slot[i] = c.slots[r.Type][k]
		out.Positive[i] = c.positive[r.Type][k]
	}
	for _, kind := range []string{"text", "image"} {
		if n := len(c.slots[kind]); n > count[kind] {
			ph := c.slots[kind][count[kind]]
			return nil, errAt(ErrCheck, ph.At, "placeholder %s is out of range: retrieval_list has %d %s entr%s", ph.Placeholder(), count[kind], kind, plural(count[kind], "y", "ies"))
		}
	}
	return out, nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (s *Schema) textNames() string {
	var n []string
	for _, f := range s.Text {
		n = append(n, f.Name)
	}
	return orNone(n)
}

func (s *Schema) imageNames() string {
	var n []string
	for _, f := range s.Image {
		n = append(n, f.Name)
	}
	return orNone(n)
}

func orNone(n []string) string {
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

type checker struct {
	s        *Schema
	slots    map[string][]*InSet
	positive map[string][]bool
}

// colType resolves an operand and returns the type it evaluates to.
func (c *checker) operand(o *Operand) (string, error) {
	var typ string
	switch {
	case strings.EqualFold(o.Column, c.s.ID):
		o.Column, typ = c.s.ID, TypeText
	default:
		col, ok := c.s.column(o.Column)
		if !ok {
			if _, ok := c.s.textField(o.Column); ok {
				return "", errAt(ErrCheck, o.At, "%s is a text field, not a column: search it with %s IN <text_i> and a retrieval_list entry", o.Column, c.s.ID)
			}
			if _, ok := c.s.imageField(o.Column); ok {
				return "", errAt(ErrCheck, o.At, "%s is an image field, not a column: search it with %s IN <image_i> and a retrieval_list entry", o.Column, c.s.ID)
			}
			return "", errAt(ErrCheck, o.At, "unknown column %q (columns: %s)", truncate(o.Column, 40), c.s.columnNames())
		}
		o.Column, typ = col.Name, col.Type
	}
	switch o.Func {
	case "":
		return typ, nil
	case "LOWER", "UPPER":
		if typ != TypeText {
			return "", errAt(ErrCheck, o.At, "%s needs a TEXT column, %s is %s", o.Func, o.Column, typ)
		}
		return TypeText, nil
	case "LENGTH":
		if typ != TypeText {
			return "", errAt(ErrCheck, o.At, "LENGTH needs a TEXT column, %s is %s", o.Column, typ)
		}
		return TypeInteger, nil
	}
	return "", errAt(ErrRejected, o.At, "function %s is not allowed", o.Func)
}

func (s *Schema) columnNames() string {
	n := []string{s.ID}
	for _, c := range s.Columns {
		n = append(n, c.Name)
	}
	return strings.Join(n, ", ")
}

func (c *checker) value(o Operand, typ string, v Value) error {
	switch {
	case typ == TypeText && v.Kind != ValString:
		return errAt(ErrCheck, v.At, "%s is TEXT: compare it with a quoted string, not the number %s", describeOperand(o), v.literal())
	case typ != TypeText && v.Kind == ValString:
		return errAt(ErrCheck, v.At, "%s is %s: compare it with a number, not the string %s", describeOperand(o), typ, v.literal())
	}
	return nil
}

func describeOperand(o Operand) string {
	if o.Func != "" {
		return o.Func + "(" + o.Column + ")"
	}
	return o.Column
}

func (c *checker) walk(e Expr, neg bool) error {
	switch x := e.(type) {
	case *Logic:
		for _, a := range x.Args {
			if err := c.walk(a, neg); err != nil {
				return err
			}
		}
	case *Not:
		return c.walk(x.X, !neg)
	case *Cmp:
		typ, err := c.operand(&x.Left)
		if err != nil {
			return err
		}
		return c.value(x.Left, typ, x.Right)
	case *InList:
		typ, err := c.operand(&x.Left)
		if err != nil {
			return err
		}
		for _, v := range x.Values {
			if err := c.value(x.Left, typ, v); err != nil {
				return err
			}
		}
	case *Between:
		typ, err := c.operand(&x.Left)
		if err != nil {
			return err
		}
		if err := c.value(x.Left, typ, x.Lo); err != nil {
			return err
		}
		return c.value(x.Left, typ, x.Hi)
	case *Like:
		typ, err := c.operand(&x.Left)
		if err != nil {
			return err
		}
		if typ != TypeText {
			return errAt(ErrCheck, x.Left.At, "LIKE needs a TEXT operand, %s is %s", describeOperand(x.Left), typ)
		}
		return c.value(x.Left, typ, x.Pattern)
	case *IsNull:
		_, err := c.operand(&x.Left)
		return err
	case *InSet:
		if !strings.EqualFold(x.Column, c.s.ID) {
			return errAt(ErrCheck, x.At, "%s may only follow the id column: write %s %sIN %s", x.Placeholder(), c.s.ID, map[bool]string{true: "NOT ", false: ""}[x.Negate], x.Placeholder())
		}
		x.Column = c.s.ID
		if c.slots == nil {
			c.slots = map[string][]*InSet{}
			c.positive = map[string][]bool{}
		}
		want := len(c.slots[x.Kind])
		if x.Index != want {
			for _, prev := range c.slots[x.Kind] {
				if prev.Index == x.Index {
					return errAt(ErrCheck, x.At, "%s is used twice: each retrieval result is used once (give the second use its own entry)", x.Placeholder())
				}
			}
			return errAt(ErrCheck, x.At, "%s is out of order: placeholders are numbered in order of appearance, this one should be <%s_%d>", x.Placeholder(), x.Kind, want)
		}
		c.slots[x.Kind] = append(c.slots[x.Kind], x)
		c.positive[x.Kind] = append(c.positive[x.Kind], neg == x.Negate)
	default:
		return errAt(ErrSyntax, 0, "unknown node %T", e)
	}
	return nil
}
