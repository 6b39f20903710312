package hybrid

import (
	"errors"
	"strings"
	"testing"
)

func TestSchemaValidate(t *testing.T) {
	cases := []struct{ name, json, msg string }{
		{"ok", `{"name":"x","id":"doc_id","columns":[{"name":"a","type":"TEXT"}],"text":[{"name":"t"}]}`, ""},
		{"bad type", `{"name":"x","id":"doc_id","columns":[{"name":"a","type":"BLOB"}],"text":[]}`, "columns[0].type"},
		{"duplicate name", `{"name":"x","id":"doc_id","columns":[{"name":"a","type":"TEXT"}],"text":[{"name":"A"}]}`, "already used"},
		{"reserved", `{"name":"x","id":"_row","columns":[],"text":[]}`, "reserved"},
		{"bad name", `{"name":"x","id":"doc id","columns":[],"text":[]}`, "must match"},
		{"numeric role on text", `{"name":"x","id":"d","columns":[{"name":"a","type":"TEXT","role":"numeric"}],"text":[]}`, "role numeric"},
		{"bad path", `{"name":"x","id":"d","columns":[{"name":"a","type":"TEXT","source":"a[x]"}],"text":[]}`, "source"},
		{"bad index", `{"name":"x","id":"d","columns":[],"text":[{"name":"t","index":"faiss"}]}`, "text[0].index"},
		{"unknown field", `{"name":"x","id":"d","columns":[],"text":[],"colour":1}`, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSchema([]byte(tc.json))
			if tc.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("got %v, want ErrSchema mentioning %q", err, tc.msg)
			}
		})
	}
}

func TestExtract(t *testing.T) {
	row := map[string]any{"a": []any{"x", "y", nil, "z"}, "r": []any{map[string]any{"t": "one"}, map[string]any{"t": "two"}}, "n": nil}
	cases := []struct {
		path string
		want []any
	}{
		{"a[0]", []any{"x"}}, {"a[-1]", []any{"z"}}, {"a[9]", nil}, {"a[]", []any{"x", "y", "z"}},
		{"r[].t", []any{"one", "two"}}, {"n", nil}, {"missing", nil},
	}
	for _, tc := range cases {
		st, err := parsePath(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got := extract(row, st)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.path, got, tc.want)
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%s: %v, want %v", tc.path, got, tc.want)
			}
		}
	}
}

// FuzzParseSchema: schema files are outside input; ParseSchema never
// panics and what it accepts validates.
func FuzzParseSchema(f *testing.F) {
	for _, name := range BuiltinSchemas() {
		raw, _ := schemaFS.ReadFile("schemas/" + name + ".json")
		f.Add(raw)
	}
	f.Add([]byte(`{"name":"x","id":"d","columns":[{"name":"a","type":"TEXT","source":"a[].b[-2].c[#]"}],"text":[]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := ParseSchema(raw)
		if err != nil {
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted schema does not validate: %v", err)
		}
	})
}
