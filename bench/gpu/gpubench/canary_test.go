package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// serveCPU runs commands (one JSON line each) through a -cpu bench and
// returns its answers, one decoded JSON object per output line.
func serveCPU(t *testing.T, commands ...string) []map[string]any {
	t.Helper()
	var out bytes.Buffer
	b := &bench{cpu: true, out: json.NewEncoder(&out)}
	if err := b.serve(strings.NewReader(strings.Join(commands, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	return testutil.JSONLines(t, out.String())
}

// TestCanaryOp: "canary" before a load is an error line; after a load
// (fp16 and int8, -cpu) it answers passed reports for both indexes.
func TestCanaryOp(t *testing.T) {
	rows := serveCPU(t, `{"op": "canary"}`, `{"op": "load", "n": 3000, "dim": 64, "seed": 1, "int8": true}`, `{"op": "canary"}`, `{"op": "quit"}`)
	if len(rows) != 4 {
		t.Fatalf("%d answers, want 4: %v", len(rows), rows)
	}
	if e, _ := rows[0]["error"].(string); !strings.Contains(e, "no index loaded") {
		t.Errorf("canary before load: %v", rows[0])
	}
	r := rows[2]
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
