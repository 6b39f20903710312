package hybrid

import (
	"errors"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
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

func TestCompileValid(t *testing.T) {
	am, en := amazonSchema(t), enronSchema(t)
	cases := []struct {
		name   string
		s      *Schema
		sql    string
		list   []Retrieval
		want   string // Format of the checked tree
		posNeg []bool
	}{
		{"paper example", am, "WHERE brand = 'Nike' AND price < 100 AND product_id IN <text_0>", []Retrieval{txt("title", "running shoes")},
			"brand = 'Nike' AND price < 100 AND product_id IN <text_0>", []bool{true}},
		{"no WHERE, lower-case keywords, == and <>", am, "brand == 'Lego' or brand <> 'Hornby'", nil, "brand = 'Lego' OR brand != 'Hornby'", nil},
		{"escaped apostrophe", am, "WHERE brand = 'Children''s Toys'", nil, "brand = 'Children''s Toys'", nil},
		{"nesting and NOT", am, "WHERE (brand = 'A' OR brand = 'B') AND NOT (price > 30) AND product_id NOT IN <text_0>", []Retrieval{txt("reviews", "durable")},
			"(brand = 'A' OR brand = 'B') AND NOT (price > 30) AND product_id NOT IN <text_0>", []bool{false}},
		{"NOT around placeholder flips polarity", am, "WHERE NOT (product_id NOT IN <text_0>) AND product_id IN <text_1>", []Retrieval{txt("title", "a"), txt("description", "b")},
			"NOT (product_id NOT IN <text_0>) AND product_id IN <text_1>", []bool{true, true}},
		{"IN list, BETWEEN, LIKE, IS NULL, functions", am, "WHERE category IN ('Trains', 'Puzzles') AND rating NOT BETWEEN 1 AND 2.5 AND LOWER(title_x) IS NULL", nil, "", nil},
		{"functions", am, "WHERE LOWER(brand) LIKE '%lego%' AND LENGTH(brand) >= 3 AND stock IS NOT NULL AND price BETWEEN -1 AND 1e3", nil,
			"LOWER(brand) LIKE '%lego%' AND LENGTH(brand) >= 3 AND stock IS NOT NULL AND price BETWEEN -1 AND 1000.0", nil},
		{"quoted keyword columns (paper's \"From\")", en, `WHERE "From" = 'jeff.dasovich@enron.com' AND year >= 2000 AND message_id NOT IN <text_0>`, []Retrieval{txt("subject", "meeting")},
			`"from" = 'jeff.dasovich@enron.com' AND year >= 2000 AND message_id NOT IN <text_0>`, []bool{false}},
		{"case-insensitive names", en, `WHERE YEAR = 2001 AND Message_ID IN <text_0> AND "to" = 'x'`, []Retrieval{txt("Body", "budget")},
			`year = 2001 AND message_id IN <text_0> AND to = 'x'`, []bool{true}},
		{"real literal keeps its type", am, "WHERE price = 7.0", nil, "price = 7.0", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp, err := Compile(tc.s, Program{SQL: tc.sql, RetrievalList: tc.list}, Limits{})
			if tc.want == "" {
				if err == nil {
					t.Fatalf("want an error for %q", tc.sql)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.sql, err)
			}
			if got := Format(cp.Expr); got != tc.want {
				t.Fatalf("Format = %q, want %q", got, tc.want)
			}
			if tc.posNeg != nil {
				for i, p := range tc.posNeg {
					if cp.Positive[i] != p {
						t.Fatalf("Positive[%d] = %v, want %v", i, cp.Positive[i], p)
					}
				}
			}
			// Format is a fixed point of Parse.
			e2, err := Parse(tc.want, Limits{})
			if err != nil || Format(e2) != tc.want {
				t.Fatalf("reparse of %q: %v %q", tc.want, err, Format(e2))
			}
			// The generated SQL binds every literal.
			q, args := SQL(cp.Expr, func(*InSet) []int32 { return []int32{1, 2} })
			if strings.Contains(q, "'") {
				t.Fatalf("SQL %q contains a quoted literal", q)
			}
			if len(args) == 0 {
				t.Fatalf("SQL %q binds nothing", q)
			}
		})
	}
}

func TestInjectionRejected(t *testing.T) {
	am, en := amazonSchema(t), enronSchema(t)
	big := strings.Repeat("9", 40)
	cases := []struct {
		name string
		s    *Schema
		sql  string
		list []Retrieval
		kind error
		msg  string
	}{
		{"stacked statement", am, "WHERE brand = 'x'; DROP TABLE rows", nil, ErrRejected, "stacked statements"},
		{"stacked after quote", am, "WHERE brand = 'x'; SELECT 1", nil, ErrRejected, "';'"},
		{"line comment", am, "WHERE brand = 'x' -- AND price < 3", nil, ErrRejected, "comments are not allowed"},
		{"block comment", am, "WHERE brand = 'x' /* */ OR 1=1", nil, ErrRejected, "comments are not allowed"},
		{"comment closing a quote", am, "WHERE brand = 'x'/*' AND price > 1 */", nil, ErrRejected, "comments"},
		{"hash comment", am, "WHERE price > 1 # trailing", nil, ErrRejected, "comments"},
		{"union", am, "WHERE brand = 'x' UNION SELECT product_id FROM rows", nil, ErrRejected, "UNION is not allowed"},
		{"union inside parentheses", am, "WHERE (brand = 'x' UNION SELECT 1)", nil, ErrRejected, "UNION"},
		{"subquery in IN", am, "WHERE product_id IN (SELECT product_id FROM rows)", nil, ErrRejected, "subqueries are not allowed"},
		{"subquery in comparison", am, "WHERE price > (SELECT max(price) FROM rows)", nil, ErrRejected, "subqueries"},
		{"attach", am, "ATTACH DATABASE 'x.db' AS y", nil, ErrRejected, "ATTACH is not allowed"},
		{"pragma", am, "WHERE 1 PRAGMA writable_schema=1", nil, ErrSyntax, "starts with a column"},
		{"pragma first", am, "PRAGMA query_only=0", nil, ErrRejected, "PRAGMA is not allowed"},
		{"function not whitelisted", am, "WHERE load_extension('x') = 1", nil, ErrRejected, "function load_extension is not allowed"},
		{"sqlite_version", am, "WHERE brand = sqlite_version()", nil, ErrRejected, "function calls are not allowed"},
		{"tautology without column", am, "WHERE 1=1", nil, ErrSyntax, "starts with a column"},
		{"or tautology", am, "WHERE brand = 'x' OR 'a'='a'", nil, ErrSyntax, "starts with a column"},
		{"column comparison", am, "WHERE price > rating", nil, ErrSyntax, "must be a literal"},
		{"unknown column", am, "WHERE colour = 'red'", nil, ErrCheck, `unknown column "colour"`},
		{"internal rowid column", am, "WHERE _row = 1", nil, ErrCheck, `unknown column "_row"`},
		{"text field as column", am, "WHERE title = 'x'", nil, ErrCheck, "title is a text field"},
		{"unquoted keyword column", en, "WHERE from = 'a@enron.com'", nil, ErrRejected, `written in double quotes: "from"`},
		{"type mismatch string", am, "WHERE price = 'cheap'", nil, ErrCheck, "compare it with a number"},
		{"type mismatch number", am, "WHERE brand = 5", nil, ErrCheck, "compare it with a quoted string"},
		{"LIKE on number", am, "WHERE price LIKE '1%'", nil, ErrCheck, "LIKE needs a TEXT operand"},
		{"unbalanced quote", am, "WHERE brand = 'Lego", nil, ErrSyntax, "unterminated string literal"},
		{"unbalanced double quote", en, `WHERE "from = 'x'`, nil, ErrSyntax, "unterminated quoted identifier"},
		{"unbalanced parenthesis", am, "WHERE (brand = 'x' OR price < 3", nil, ErrSyntax, "expected ')'"},
		{"extra parenthesis", am, "WHERE brand = 'x')", nil, ErrSyntax, "after the end of the expression"},
		{"placeholder out of range", am, "WHERE product_id IN <text_0> AND product_id IN <text_1>", []Retrieval{txt("title", "a")}, ErrCheck, "<text_1> is out of range: retrieval_list has 1 text entry"},
		{"placeholder without entries", am, "WHERE product_id IN <image_0>", nil, ErrCheck, "out of range"},
		{"placeholder numbering", am, "WHERE product_id IN <text_1> AND product_id IN <text_0>", []Retrieval{txt("title", "a"), txt("title", "b")}, ErrCheck, "out of order"},
		{"placeholder reused", am, "WHERE product_id IN <text_0> OR product_id IN <text_0>", []Retrieval{txt("title", "a")}, ErrCheck, "used twice"},
		{"placeholder on other column", am, "WHERE brand IN <text_0>", []Retrieval{txt("title", "a")}, ErrCheck, "may only follow the id column"},
		{"huge placeholder index", am, "WHERE product_id IN <text_99999>", nil, ErrLimit, "out of range"},
		{"entry without placeholder", am, "WHERE price < 3", []Retrieval{txt("title", "a")}, ErrCheck, "never uses <text_0>"},
		{"entry with unknown field", am, "WHERE product_id IN <text_0>", []Retrieval{txt("colour", "red")}, ErrCheck, "not a text field"},
		{"entry with bad type", am, "WHERE product_id IN <text_0>", []Retrieval{{Type: "audio", Field: "title", Query: "x"}}, ErrCheck, `want "text" or "image"`},
		{"huge integer", am, "WHERE num_reviews > " + big, nil, ErrLimit, "longer than"},
		{"integer overflow", am, "WHERE num_reviews > 99999999999999999999", nil, ErrLimit, "out of range"},
		{"huge exponent", am, "WHERE price > 1e400", nil, ErrLimit, "out of range"},
		{"huge string", am, "WHERE brand = '" + strings.Repeat("a", 600) + "'", nil, ErrLimit, "longer than 512 bytes"},
		{"huge sql", am, "WHERE " + strings.Repeat("price > 1 AND ", 400) + "price > 1", nil, ErrLimit, "longer than 4096"},
		{"deep nesting", am, "WHERE " + strings.Repeat("(", 40) + "price > 1" + strings.Repeat(")", 40), nil, ErrLimit, "deeper than"},
		{"hex literal", am, "WHERE price > 0x10", nil, ErrSyntax, "hexadecimal"},
		{"bound parameter", am, "WHERE brand = ?", nil, ErrRejected, "bound parameters"},
		{"concatenation", am, "WHERE brand = 'a' || 'b'", nil, ErrRejected, `operator "|"`},
		{"typographic quotes", am, "WHERE brand = ’Nike’", nil, ErrSyntax, "typographic quote"},
		{"backticks", am, "WHERE `brand` = 'x'", nil, ErrSyntax, "double quotes"},
		{"NULL comparison", am, "WHERE brand = NULL", nil, ErrSyntax, "use IS NULL"},
		{"empty", am, "WHERE ", nil, ErrSyntax, "empty WHERE"},
		{"empty IN", am, "WHERE brand IN ()", nil, ErrSyntax, "empty IN list"},
		{"collate", am, "WHERE brand = 'x' COLLATE NOCASE", nil, ErrRejected, "COLLATE"},
		{"case expression", am, "WHERE CASE WHEN 1 THEN 1 END", nil, ErrRejected, "CASE"},
		{"NUL byte", am, "WHERE brand = 'x'\x00", nil, ErrSyntax, "unexpected character"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.s, Program{SQL: tc.sql, RetrievalList: tc.list}, Limits{})
			if err == nil {
				t.Fatalf("Compile(%q) accepted an injection", tc.sql)
			}
			if !errors.Is(err, tc.kind) || !errors.Is(err, rlsearch.ErrBadInput) {
				t.Fatalf("Compile(%q) = %v, want kind %v and ErrBadInput", tc.sql, err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Compile(%q) = %q, want message containing %q", tc.sql, err, tc.msg)
			}
		})
	}
}

func TestApostropheMessage(t *testing.T) {
	s := amazonSchema(t)
	_, err := Compile(s, Program{SQL: "WHERE brand = 'Children's Toys' AND price < 10"}, Limits{})
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *Error, got %v", err)
	}
	want := `unescaped apostrophe in string literal 'Children': it ends the literal before "s"; write the apostrophe twice, as in 'Children''s'`
	if pe.Msg != want || pe.Pos != 23 || pe.Field != "sql" || !errors.Is(err, ErrSyntax) {
		t.Fatalf("got %+v\nwant Msg %q at position 23", pe, want)
	}
	// The suggested fix compiles.
	if _, err := Compile(s, Program{SQL: "WHERE brand = 'Children''s Toys' AND price < 10"}, Limits{}); err != nil {
		t.Fatal(err)
	}
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
