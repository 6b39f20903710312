package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestCanaryOp: "canary" before a load is an error line; after a load
// (fp16 and int8, -cpu) it answers passed reports for both indexes.
func TestCanaryOp(t *testing.T) {
	in := strings.Join([]string{`{"op": "canary"}`, `{"op": "load", "n": 3000, "dim": 64, "seed": 1, "int8": true}`, `{"op": "canary"}`, `{"op": "quit"}`}, "\n")
	var out bytes.Buffer
	b := &bench{cpu: true, out: json.NewEncoder(&out)}
	if err := b.serve(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d answers, want 4:\n%s", len(lines), out.String())
	}
	var first, r map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || !strings.Contains(first["error"].(string), "no index loaded") {
		t.Errorf("canary before load: %s (%v)", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[2]), &r); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"report", "int8_report"} {
		rep, _ := r[key].(map[string]any)
		if rep["passed"] != true || rep["inputs"].(float64) != 128 {
			t.Errorf("%s: %v", key, r[key])
		}
	}
	if s, _ := r["summary"].(string); !strings.HasPrefix(s, "search canary passed: 128 inputs") {
		t.Errorf("summary %q", s)
	}
}
