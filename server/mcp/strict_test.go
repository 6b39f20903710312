package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`:            "",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`:          "",
		`{"jsonrpc":"2.0","id":1,"method":"ping"}]]]not json`: "after the top-level value",
		`{"a":1}{"a":1}`:      "after the top-level value",
		"{\"a\":\"caf\xe9\"}": "not valid UTF-8",
		`{"a":"[[[[{{{{"}`:    "",
		`"ping"`:              "a JSON-RPC message",
		``:                    "empty request body",
		`{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`: "nested deeper than 64",
	} {
		if got := checkMessage([]byte(body)); want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("checkMessage(%.40q) = %q, want %q", body, got, want)
		}
	}
}

// FuzzCheckMessage: the framing check never panics, and what it passes is
// one valid JSON value.
func FuzzCheckMessage(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[{}]`, `{"a":"\\"[{"}`, `{}]]`, "\xff", `{"a":[[[]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkMessage(b) == "" && !json.Valid(b) {
			t.Fatalf("passed %q, which is not one JSON value", b)
		}
	})
}
