package jsonbody

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

type budgets struct {
	MaxSteps uint64 `json:"max_steps,omitempty"`
	Ratio    float32
}

type inline struct {
	Code string `json:"code"`
}

type request struct {
	Programs []struct {
		ID      string   `json:"id"`
		Budgets *budgets `json:"budgets"`
	} `json:"programs"`
	inline
	TopK  int               `json:"topk"`
	Flags map[string]bool   `json:"flags"`
	Raw   json.RawMessage   `json:"raw"`
	Any   any               `json:"any"`
	Skip  string            `json:"-"`
	Pairs [2]int            `json:"pairs"`
	Docs  []json.RawMessage `json:"docs"`
}

func (request) FieldAliases() map[string]string { return map[string]string{"k": "topk"} }

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		unknown    Unknown
		field, msg string // msg "" means success
	}{
		{"ok", `{"programs": [{"id": "a", "budgets": {"max_steps": 3, "Ratio": 0.5}}], "code": "x", "topk": 2, "flags": {"a": true}, "raw": [1, {"x": 2}], "any": {"y": [1]}, "pairs": [1, 2], "docs": [1, "x"]}`, Reject, "", ""},
		{"nulls", `{"programs": null, "topk": null, "flags": null}`, Reject, "", ""},
		{"type in a list", `{"programs": [{"id": "a"}, {"id": 3}]}`, Reject, "programs[1].id", "programs[1].id must be a string, got number"},
		{"nested uint", `{"programs": [{"budgets": {"max_steps": -1}}]}`, Reject, "programs[0].budgets.max_steps", "must be a non-negative integer, got -1"},
		{"uint as string", `{"programs": [{"budgets": {"max_steps": "x"}}]}`, Reject, "programs[0].budgets.max_steps", "must be an integer, got string"},
		{"float for int", `{"topk": 1.5}`, Reject, "topk", "topk must be an integer, got 1.5"},
		{"int overflow", `{"topk": 1e400}`, Reject, "topk", "must be an integer"},
		{"huge int", `{"topk": 99999999999999999999}`, Reject, "topk", "out of range"},
		{"float32 overflow", `{"programs": [{"budgets": {"Ratio": 1e39}}]}`, Reject, "programs[0].budgets.Ratio", "out of range"},
		{"map value", `{"flags": {"a": 1}}`, Reject, "flags.a", "flags.a must be a boolean, got number"},
		{"array too long", `{"pairs": [1, 2, 3]}`, Reject, "pairs", "at most 2 elements"},
		{"embedded field", `{"code": 1}`, Reject, "code", "code must be a string, got number"},
		{"near miss", `{"TopK": 3}`, Ignore, "TopK", `unknown field "TopK": did you mean "topk"?`},
		{"alias", `{"k": 3}`, Ignore, "k", `did you mean "topk"?`},
		{"nested near miss", `{"programs": [{"ID": "a"}]}`, Ignore, "programs[0].ID", `unknown field "programs[0].ID": did you mean "id"?`},
		{"unknown rejected", `{"bogus": 1}`, Reject, "bogus", `unknown field "bogus"; known fields: any, code, docs, flags, pairs, programs, raw, topk`},
		{"unknown ignored", `{"bogus": 1, "code": "x"}`, Ignore, "", ""},
		{"dash field is unknown", `{"Skip": "x"}`, Reject, "Skip", "unknown field"},
		{"not an object", `[1]`, Reject, "", "must be a JSON object, got list"},
		{"string", `"x"`, Reject, "", "must be a JSON object, got string"},
		{"trailing", `{"code": "x"}]]]not json`, Reject, "", "unexpected data after the top-level object at byte offset 13"},
		{"second object", `{"code": "x"} {"code": "y"}`, Reject, "", "unexpected data after the top-level object at byte offset 14"},
		{"trailing space ok", "{\"code\": \"x\"} \n\t", Reject, "", ""},
		{"empty", " \n", Reject, "", "empty request body"},
		{"truncated", `{"code": `, Reject, "", "unexpected end of input"},
		{"syntax", `{"code" "x"}`, Reject, "", "invalid JSON at byte offset"},
		{"invalid UTF-8", "{\"code\": \"caf\xe9\"}", Reject, "", "byte 0xe9 at byte offset 13"},
		{"deep", `{"any": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, Reject, "", "nested deeper than 64"},
		{"brackets in strings do not nest", `{"code": "` + strings.Repeat("[", 100) + `"}`, Reject, "", ""},
		{"escaped quote", `{"code": "\"[[[", "topk": 1}`, Reject, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r request
			err := Decode([]byte(tc.body), &r, tc.unknown)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				return
			}
			var fe *rlsearch.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, rlsearch.ErrBadInput) {
				t.Fatalf("err = %v (%T), want a *rlsearch.FieldError", err, err)
			}
			if fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("field %q error %q, want field %q and an error containing %q", fe.Field, err, tc.field, tc.msg)
			}
		})
	}
}

// TestDecodeAgreesWithEncodingJSON: what Decode accepts decodes as
// encoding/json decodes it.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	body := `{"programs": [{"id": "a", "budgets": {"max_steps": 3}}], "code": "x", "topk": 7, "raw": {"k": [1]}}`
	var a, b request
	if err := Decode([]byte(body), &a, Reject); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("Decode gave %s, encoding/json %s", ja, jb)
	}
}

// FuzzDecode: any body either decodes, or fails with a *rlsearch.FieldError;
// a body Decode accepts is one JSON object that encoding/json accepts too.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"programs": [{"id": "a", "budgets": {"max_steps": 3}}], "code": "x"}`,
		`{"code": "x"}]]]not json`, `{"code": "x"}{"code": "y"}`, `{"TopK": 1}`, "{\"code\": \"\xff\"}",
		`[[[[[[[[[[]]]]]]]]]]`, ``, `null`, `{"topk": 1e400}`, `{"pairs": [1, 2, 3]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r request
		err := Decode(body, &r, Reject)
		if err != nil {
			var fe *rlsearch.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *rlsearch.FieldError", err)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil || m == nil {
			t.Fatalf("Decode accepted %q, encoding/json says %v", body, err)
		}
	})
}

// BenchmarkObject: the framing of a Search-R1 /retrieve body of 16,384
// queries (about 0.8 MB), against encoding/json decoding it into a map.
func BenchmarkObject(b *testing.B) {
	qs := make([]string, 16384)
	for i := range qs {
		qs[i] = fmt.Sprintf("who was the %d-th president of the united states of america", i)
	}
	body, _ := json.Marshal(map[string]any{"queries": qs, "topk": 10, "return_scores": true})
	b.Run("jsonbody.Object", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := Object(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// upper is a field type with its own decoder that refuses lower case with
// a *rlsearch.FieldError and sees JSON null.
type upper struct {
	s    string
	null bool
}

func (u *upper) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		u.null = true
		return nil
	}
	if err := json.Unmarshal(b, &u.s); err != nil || strings.ToUpper(u.s) != u.s {
		return rlsearch.BadField("name", "name must be upper case, got %s", b)
	}
	return nil
}

// TestDecodeMembers: the members of Object decoded as Decode decodes the
// body, the field's own decoder seeing null and its FieldError kept.
type membersReq struct {
	inline
	Name upper   `json:"name"`
	TopK int     `json:"topk"`
	Opt  *string `json:"opt"`
}

func TestDecodeMembers(t *testing.T) {
	type req = membersReq
	for _, tc := range []struct {
		body, field, msg string
		check            func(r req) bool
	}{
		{`{"code": "x", "name": "AB", "topk": 3, "extra": 1}`, "", "", func(r req) bool { return r.Code == "x" && r.Name.s == "AB" && r.TopK == 3 && r.Opt == nil }},
		{`{"name": null, "opt": null}`, "", "", func(r req) bool { return r.Name.null && r.Opt == nil }},
		{`{"name": "ab"}`, "name", "name must be upper case, got \"ab\"", nil},
		{`{"topk": "3"}`, "topk", "topk must be an integer, got string", nil},
		{`{"top_k": 3}`, "top_k", `did you mean "topk"?`, nil},
	} {
		members, err := Object([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		var r req
		err = DecodeMembers(members, &r, Ignore)
		var fe *rlsearch.FieldError
		switch {
		case tc.msg == "" && (err != nil || !tc.check(r)):
			t.Errorf("%s: %+v, %v", tc.body, r, err)
		case tc.msg != "" && (!errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(err.Error(), tc.msg)):
			t.Errorf("%s: error %v, want field %q and %q", tc.body, err, tc.field, tc.msg)
		}
	}
	if err := DecodeMembers(map[string]json.RawMessage{}, req{}, Ignore); err == nil {
		t.Error("a non-pointer was accepted")
	}
}
