package hybrid

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/transcript"
)

func amazonSchema(t testing.TB) *Schema {
	s, err := BuiltinSchema("amazon_toys")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func enronSchema(t testing.TB) *Schema {
	s, err := BuiltinSchema("enron_emails")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func txt(field, q string) Retrieval { return Retrieval{Type: "text", Field: field, Query: q} }

// TestParseTranscript runs testdata/parse.txt, the SQL parser and
// checker: `compile schema=NAME [quoted]` compiles the input's SQL lines
// (written as transcript.Expand pieces when quoted) with the retrieval
// list of its "retrieval TYPE FIELD: QUERY" lines, and prints the
// formatted expression, each entry's polarity, the generated SQL and its
// bound arguments, or the error with its kinds and position. Every
// accepted program must also format to a fixed point of Parse and bind
// every literal of its SQL.
func TestParseTranscript(t *testing.T) {
	schemas := map[string]*Schema{"amazon_toys": amazonSchema(t), "enron_emails": enronSchema(t)}
	transcript.Run(t, "testdata/parse.txt", func(t *testing.T, c *transcript.Case) string {
		name, _ := c.Arg("schema")
		s := schemas[name]
		if c.Cmd != "compile" || s == nil {
			t.Fatalf("%s: want compile schema=amazon_toys|enron_emails", c.Pos())
		}
		var sqlLines []string
		var list []Retrieval
		for _, l := range strings.Split(c.Input, "\n") {
			if r, ok := strings.CutPrefix(l, "retrieval "); ok {
				head, query, ok := strings.Cut(r, ": ")
				typ, field, ok2 := strings.Cut(head, " ")
				if !ok || !ok2 {
					t.Fatalf("%s: want retrieval TYPE FIELD: QUERY, got %q", c.Pos(), l)
				}
				list = append(list, Retrieval{Type: typ, Field: field, Query: query})
				continue
			}
			sqlLines = append(sqlLines, l)
		}
		sql := strings.Join(sqlLines, "\n")
		if _, ok := c.Arg("quoted"); ok {
			var err error
			if sql, err = transcript.Expand(sql); err != nil {
				t.Fatal(err)
			}
		}
		cp, err := Compile(s, Program{SQL: sql, RetrievalList: list}, Limits{})
		if err != nil {
			return compileError(err)
		}
		var b strings.Builder
		text := Format(cp.Expr)
		fmt.Fprintf(&b, "format: %s\n", text)
		if len(cp.Positive) > 0 {
			fmt.Fprintf(&b, "positive: %v\n", cp.Positive)
		}
		q, args := SQL(cp.Expr, func(*InSet) []int32 { return []int32{1, 2} })
		fmt.Fprintf(&b, "sql: %s\nargs: %#v\n", q, args)
		// Format is a fixed point of Parse.
		if e2, err := Parse(text, Limits{}); err != nil || Format(e2) != text {
			t.Errorf("reparse of %q: %v %q", text, err, Format(e2))
		}
		// The generated SQL binds every literal.
		if strings.Contains(q, "'") {
			t.Errorf("SQL %q contains a quoted literal", q)
		}
		if len(args) == 0 {
			t.Errorf("SQL %q binds nothing", q)
		}
		return b.String()
	})
}

// compileError prints an error of Compile: its message, the kinds it
// matches (errors.Is) and, for an *Error, the field and position.
func compileError(err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %s\nkind:", transcript.Printable(err.Error()))
	for _, k := range []struct {
		name string
		err  error
	}{{"ErrSyntax", ErrSyntax}, {"ErrRejected", ErrRejected}, {"ErrCheck", ErrCheck}, {"ErrLimit", ErrLimit}, {"ErrBadInput", rlsearch.ErrBadInput}} {
		if errors.Is(err, k.err) {
			b.WriteString(" " + k.name)
		}
	}
	var pe *Error
	if errors.As(err, &pe) {
		fmt.Fprintf(&b, " field=%s pos=%d", pe.Field, pe.Pos)
	} else {
		b.WriteString(" (not a *hybrid.Error)")
	}
	b.WriteString("\n")
	return b.String()
}

// FuzzParse: Parse and Check never panic; an accepted expression formats
// to text that parses back to the same text, and its SQL binds every
// literal (no quote reaches the SQL text).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"WHERE brand = 'Nike' AND price < 100 AND product_id IN <text_0>",
		"WHERE (brand = 'A' OR brand = 'B') AND NOT (price > 30) AND product_id NOT IN <text_0>",
		"WHERE brand = 'Children''s' OR LOWER(category) LIKE '%train_' AND rating BETWEEN 1 AND 2.5e0",
		"WHERE stock IS NOT NULL AND num_reviews NOT IN (1, -2, 3)",
		"WHERE brand = 'x'; DROP TABLE rows --",
		"WHERE brand = 'Children's Toys'",
		"WHERE product_id IN <image_0> OR product_id IN <text_1>",
	} {
		f.Add(s)
	}
	sch := amazonSchema(f)
	list := []Retrieval{txt("title", "a"), txt("reviews", "b")}
	f.Fuzz(func(t *testing.T, sql string) {
		e, err := Parse(sql, Limits{})
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Pos < 0 || pe.Pos > len(sql) {
				t.Fatalf("Parse(%q) error %v is not a positioned *Error", sql, err)
			}
			return
		}
		text := Format(e)
		e2, err := Parse(text, Limits{})
		if err != nil {
			t.Fatalf("Format output %q (from %q) does not parse: %v", text, sql, err)
		}
		if got := Format(e2); got != text {
			t.Fatalf("Format not stable: %q -> %q", text, got)
		}
		cp, err := Check(sch, e2, Program{SQL: text, RetrievalList: list}, Limits{})
		if err != nil {
			return
		}
		q, _ := SQL(cp.Expr, func(*InSet) []int32 { return nil })
		if strings.ContainsAny(q, "';") || strings.Contains(q, "--") {
			t.Fatalf("SQL %q carries model text", q)
		}
	})
}
