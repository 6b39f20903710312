package hybrid

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randExpr builds a random checked-schema expression over c's columns
// with literals drawn from the data (so that predicates select something)
// and placeholders on text fields.
type exprGen struct {
	c    *Collection
	rng  *rand.Rand
	list []Retrieval
}

func (g *exprGen) value(ci int) Value {
	col := g.c.Meta.Schema.Columns[ci]
	for range 10 {
		v := g.c.cells[g.rng.IntN(g.c.Len())][ci]
		switch v.Kind {
		case ValString:
			return Value{Kind: ValString, S: v.S}
		case ValInt:
			return Value{Kind: ValInt, I: v.I + int64(g.rng.IntN(3)-1)}
		case ValReal:
			if g.rng.IntN(2) == 0 {
				return Value{Kind: ValInt, I: int64(v.F)}
			}
			return Value{Kind: ValReal, F: v.F}
		}
	}
	if col.Type == TypeText {
		return Value{Kind: ValString, S: "zz"}
	}
	return Value{Kind: ValInt, I: 1}
}

func (g *exprGen) leaf() Expr {
	s := g.c.Meta.Schema
	if len(s.Text) > 0 && g.rng.IntN(5) == 0 {
		fi := g.rng.IntN(len(s.Text))
		words := strings.Fields(g.c.texts[fi][g.rng.IntN(g.c.Len())])
		q := "toy"
		if len(words) > 0 {
			q = words[g.rng.IntN(len(words))]
		}
		g.list = append(g.list, txt(s.Text[fi].Name, q))
		return &InSet{Column: s.ID, Negate: g.rng.IntN(3) == 0, Kind: "text"}
	}
	ci := g.rng.IntN(len(s.Columns))
	col := s.Columns[ci]
	op := Operand{Column: col.Name}
	if col.Type == TypeText && g.rng.IntN(4) == 0 {
		op.Func = []string{"LOWER", "UPPER", "LENGTH"}[g.rng.IntN(3)]
	}
	val := func() Value {
		v := g.value(ci)
		switch op.Func {
		case "LENGTH":
			return Value{Kind: ValInt, I: int64(len(v.S))}
		case "LOWER":
			v.S = strings.ToLower(v.S)
		case "UPPER":
			v.S = strings.ToUpper(v.S)
		}
		return v
	}
	isText := col.Type == TypeText && op.Func != "LENGTH"
	switch g.rng.IntN(6) {
	case 0:
		return &InList{Left: op, Negate: g.rng.IntN(2) == 0, Values: []Value{val(), val(), val()}}
	case 1:
		lo, hi := val(), val()
		return &Between{Left: op, Negate: g.rng.IntN(2) == 0, Lo: lo, Hi: hi}
	case 2:
		if isText {
			v := val()
			r := []rune(v.S)
			if len(r) > 3 {
				a := g.rng.IntN(len(r) - 2)
				pat := "%" + string(r[a:a+2]) + "_%"
				if g.rng.IntN(2) == 0 {
					pat = strings.ToUpper(pat)
				}
				return &Like{Left: op, Negate: g.rng.IntN(2) == 0, Pattern: Value{Kind: ValString, S: pat}}
			}
		}
		return &IsNull{Left: op, Negate: g.rng.IntN(2) == 0}
	default:
		return &Cmp{Left: op, Op: []string{"=", "!=", "<", "<=", ">", ">="}[g.rng.IntN(6)], Right: val()}
	}
}

func (g *exprGen) expr(depth int) Expr {
	if depth == 0 || g.rng.IntN(3) == 0 {
		return g.leaf()
	}
	switch g.rng.IntN(5) {
	case 0:
		return &Not{X: g.expr(depth - 1)}
	default:
		n := 2 + g.rng.IntN(2)
		l := &Logic{Op: []string{"AND", "OR"}[g.rng.IntN(2)]}
		for range n {
			l.Args = append(l.Args, g.expr(depth-1))
		}
		return l
	}
}

// TestSQLEqualsGo: on both shipped collections, the rows SQLite selects
// for random checked expressions equal a plain-Go evaluation of the same
// AST (three-valued logic, LIKE, functions, placeholders) over all rows.
func TestSQLEqualsGo(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"amazon_toys", "enron_emails"} {
		t.Run(name, func(t *testing.T) {
			c := shipped(t, name)
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			nonEmpty := 0
			for i := range 60 {
				g := &exprGen{c: c, rng: rng}
				e := g.expr(3)
				// Number placeholders in order of appearance via Format/Parse.
				text := Format(e)
				text = renumber(text)
				p := Program{SQL: "WHERE " + text, RetrievalList: g.list}
				cp, err := c.Compile(p)
				if err != nil {
					t.Fatalf("case %d: %s: %v", i, p.SQL, err)
				}
				res := c.ExecuteCompiled(ctx, []*Compiled{cp})[0]
				if res.Err != nil {
					t.Fatalf("case %d: %s: %v", i, p.SQL, res.Err)
				}
				want, err := c.EvalGo(ctx, cp)
				if err != nil {
					t.Fatal(err)
				}
				got := slices.Clone(res.Rows)
				slices.Sort(got)
				if res.Total != len(want) || (len(want) <= 100 && !slices.Equal(got, want)) {
					t.Fatalf("case %d: %s\nSQL selected %d rows, Go %d", i, p.SQL, res.Total, len(want))
				}
				if len(want) > 0 {
					nonEmpty++
				}
			}
			if nonEmpty < 12 {
				t.Fatalf("only %d of 60 random expressions selected rows: the test is too weak", nonEmpty)
			}
		})
	}
}

// renumber numbers <text_> placeholders written by Format for InSet nodes
// with Index 0 in order of appearance.
func renumber(s string) string {
	var b strings.Builder
	n := 0
	for {
		i := strings.Index(s, "<text_0>")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		fmt.Fprintf(&b, "<text_%d>", n)
		n++
		s = s[i+len("<text_0>"):]
	}
}

func TestReadOnlyConnection(t *testing.T) {
	c := shipped(t, "enron_emails")
	for _, q := range []string{`DELETE FROM "rows"`, `CREATE TABLE x (a)`, `PRAGMA query_only=0; DELETE FROM "rows"`} {
		if _, err := c.db.Exec(q); err == nil {
			t.Fatalf("%s succeeded on the query connection", q)
		}
	}
	if n, err := c.count(context.Background(), &IsNull{Left: Operand{Column: "year"}, Negate: true}, true); err != nil || n != c.Len() {
		t.Fatalf("rows after write attempts: %d, %v; want %d", n, err, c.Len())
	}
}

func TestRanking(t *testing.T) {
	ctx := context.Background()
	c := shipped(t, "amazon_toys")
	p := Program{SQL: "WHERE product_id IN <text_0> OR product_id IN <text_1>",
		RetrievalList: []Retrieval{txt("title", "steam locomotive"), txt("title", "hornby coach")}}
	res, err := c.Execute(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	cp, _ := c.Compile(p)
	cands, _ := c.retrieveAll(ctx, []*Compiled{cp})
	want := map[int32]float64{}
	for _, cs := range cands[0] {
		for rank, r := range cs {
			want[r] += 1 / float64(RRFK+rank+1)
		}
	}
	if res.Total != len(want) {
		t.Fatalf("total %d, want the union size %d", res.Total, len(want))
	}
	for i, r := range res.Rows {
		if res.Scores[i] != want[r] {
			t.Fatalf("row %d score %v, want RRF %v", r, res.Scores[i], want[r])
		}
		if i > 0 && (res.Scores[i] > res.Scores[i-1] || res.Scores[i] == res.Scores[i-1] && r < res.Rows[i-1]) {
			t.Fatalf("order broken at %d", i)
		}
	}
	// Negative placeholders do not score; structured-only rows tie at 0
	// and come in row order.
	res, err = c.Execute(ctx, Program{SQL: "WHERE brand = 'Hornby' AND product_id NOT IN <text_0>", RetrievalList: []Retrieval{txt("title", "coach")}})
	if err != nil || res.Total == 0 {
		t.Fatal(err, res)
	}
	for i, s := range res.Scores {
		if s != 0 || (i > 0 && res.Rows[i] <= res.Rows[i-1]) {
			t.Fatalf("structured-only ranking broken at %d: %v %v", i, s, res.Rows[:i+1])
		}
	}
}

// An entry that retrieves nothing (stop words only) is an empty set: IN is
// false for every row, NOT IN true.
func TestEmptyCandidateSet(t *testing.T) {
	ctx := context.Background()
	c := shipped(t, "enron_emails")
	list := []Retrieval{txt("subject", "the of and")}
	in, err := c.Execute(ctx, Program{SQL: "WHERE message_id IN <text_0>", RetrievalList: list})
	if err != nil || in.Total != 0 {
		t.Fatalf("IN empty set: %v total %d", err, in.Total)
	}
	out, err := c.Execute(ctx, Program{SQL: "WHERE message_id NOT IN <text_0>", RetrievalList: list})
	if err != nil || out.Total != c.Len() {
		t.Fatalf("NOT IN empty set: %v total %d, want %d", err, out.Total, c.Len())
	}
}
