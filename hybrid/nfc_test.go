package hybrid

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// nfcCollection builds a small collection whose "name" and "city" columns
// hold the same words composed (NFC) and decomposed (NFD), and whose
// "kind" column is ASCII only.
func nfcCollection(t *testing.T) *Collection {
	t.Helper()
	ctx := context.Background()
	var s Schema
	if err := json.Unmarshal([]byte(`{"name": "nfc", "id": "doc_id", "columns": [
		{"name": "name", "type": "TEXT"}, {"name": "city", "type": "TEXT"}, {"name": "kind", "type": "TEXT"}, {"name": "n", "type": "INTEGER"}],
		"text": [{"name": "about"}]}`), &s); err != nil {
		t.Fatal(err)
	}
	rows := []map[string]any{
		{"id": "nfc", "name": "Beyoncé", "city": "Zürich", "kind": "singer", "n": 1, "about": "Beyoncé sings"},
		{"id": "nfd", "name": "Beyonce\u0301", "city": "Zu\u0308rich", "kind": "singer", "n": 2, "about": "Beyonce\u0301 dances"},
		{"id": "plain", "name": "Beyonce", "city": "Zurich", "kind": "other", "n": 3, "about": "a plain word"},
		{"id": "angstrom-sign", "name": "\u212Bngstr\u00f6m", "city": "Uppsala", "kind": "unit", "n": 4, "about": "length"},
		{"id": "angstrom", "name": "\u00c5ngstro\u0308m", "city": "Uppsala", "kind": "unit", "n": 5, "about": "length unit"},
	}
	var b strings.Builder
	for _, r := range rows {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	data := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := Build(ctx, BuildConfig{Schema: &s, Data: data, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTextFiltersNFC: equality, IN, BETWEEN, LIKE and LENGTH on text treat
// canonically equivalent strings as equal, whichever form is stored or
// written in the program (issue 13), on the SQL path and in the plain-Go
// oracle alike; a column whose values are all NFC is compared as stored
// (its index kept); text retrieval finds both forms.
func TestTextFiltersNFC(t *testing.T) {
	ctx := context.Background()
	c := nfcCollection(t)
	if got := c.nonNFC; !got["name"] || !got["city"] || got["kind"] || got["doc_id"] {
		t.Fatalf("non-NFC columns %v, want name and city only", got)
	}
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"WHERE name = 'Beyoncé'", []string{"nfc", "nfd"}},
		{"WHERE name = 'Beyonce\u0301'", []string{"nfc", "nfd"}},
		{"WHERE name = 'Beyonce'", []string{"plain"}},
		{"WHERE name != 'Beyonce\u0301'", []string{"angstrom", "angstrom-sign", "plain"}},
		{"WHERE name IN ('\u00c5ngstr\u00f6m', 'x')", []string{"angstrom", "angstrom-sign"}},
		{"WHERE name IN ('\u212Bngstro\u0308m')", []string{"angstrom", "angstrom-sign"}},
		{"WHERE city = 'Zürich' AND n >= 1", []string{"nfc", "nfd"}},
		{"WHERE city BETWEEN 'Zu\u0308rich' AND 'Zürich'", []string{"nfc", "nfd"}},
		{"WHERE name LIKE '%cé'", []string{"nfc", "nfd"}},
		{"WHERE name LIKE 'beyonc_'", []string{"nfc", "nfd", "plain"}},
		{"WHERE LENGTH(name) = 7", []string{"nfc", "nfd", "plain"}},
		{"WHERE LOWER(city) = 'zu\u0308rich'", []string{"nfc", "nfd"}},
		{"WHERE kind = 'singer'", []string{"nfc", "nfd"}},
		{"WHERE doc_id IN <text_0>", []string{"nfc", "nfd"}},
	} {
		t.Run(tc.sql, func(t *testing.T) {
			p := Program{SQL: tc.sql}
			if strings.Contains(tc.sql, "<text_0>") {
				p.RetrievalList = []Retrieval{txt("about", "Beyonce\u0301")}
			}
			res, err := c.Execute(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(res.IDs))
			if !slices.Equal(got, tc.want) {
				t.Errorf("SQL path: %v, want %v", got, tc.want)
			}
			cp, err := c.Compile(p)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := c.EvalGo(ctx, cp)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range rows {
				ids = append(ids, c.ids[r])
			}
			if slices.Sort(ids); !slices.Equal(ids, tc.want) {
				t.Errorf("Go oracle: %v, want %v", ids, tc.want)
			}
		})
	}
	// Only the columns holding non-NFC values go through the function.
	cp, err := c.Compile(Program{SQL: "WHERE kind = 'singer' AND name = 'x'"})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := sqlNFC(cp.Expr, nil, c.nonNFC)
	if !strings.Contains(q, `"kind" = ?`) || !strings.Contains(q, nfcFunc+`("name") = ?`) {
		t.Errorf("SQL %s: want kind compared as stored and name through %s", q, nfcFunc)
	}
}

// TestParseLiteralNFC: string literals are stored in NFC, so Format prints
// the composed form and two spellings compile to equal programs.
func TestParseLiteralNFC(t *testing.T) {
	a, err := Parse("WHERE brand = 'Beyonce\u0301'", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("WHERE brand = 'Beyoncé'", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if Format(a) != Format(b) || !strings.Contains(Format(a), "Beyoncé") {
		t.Errorf("Format: %q and %q, want both with the composed literal", Format(a), Format(b))
	}
}
