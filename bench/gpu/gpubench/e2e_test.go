package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestEndToEnd drives the "e2e" op as bench/gpu/inference.sh does (load,
// then e2e), with -cpu: exact flat search and the generated tiny E5 model
// on ONNX Runtime. Every query is exactly the asked number of tokens,
// every measurement is there and positive, and a bad request is an error
// line, not a crash.
func TestEndToEnd(t *testing.T) {
	model := testutil.Model(t, "tiny")
	lib := testutil.ORTLib(t)
	t.Setenv("ONNXRUNTIME_LIB", lib)
	mc, err := embed.LoadModelConfig(model)
	if err != nil {
		t.Fatal(err)
	}
	rows := serveCPU(t,
		`{"op": "e2e", "model": "`+model+`"}`, // before any load
		fmt.Sprintf(`{"op": "load", "n": 3000, "dim": %d, "seed": 1}`, mc.Dim),
		`{"op": "e2e"}`, // no model
		`{"op": "e2e", "model": "`+model+`", "batch": 16, "tokens": 20, "reps": 2, "concurrency": 2, "single_concurrency": 4, "seconds": 0.3, "topk": 3}`,
		`{"op": "quit"}`)
	if len(rows) != 5 {
		t.Fatalf("%d answers, want 5: %v", len(rows), rows)
	}
	if e, _ := rows[0]["error"].(string); !strings.Contains(e, "no index loaded") {
		t.Errorf("e2e before load: %v", rows[0])
	}
	if e, _ := rows[2]["error"].(string); !strings.Contains(e, `"model"`) {
		t.Errorf("e2e without a model: %v", rows[2])
	}
	r := rows[3]
	if r["error"] != nil {
		t.Fatalf("e2e: %v", r["error"])
	}
	if r["encoder_device"] != "cpu" || r["batch"].(float64) != 16 || r["tokens_per_query"].(float64) != 20 {
		t.Errorf("e2e: %v", r)
	}
	for _, part := range []string{"direct", "http_batch", "http_single"} {
		m, ok := r[part].(map[string]any)
		if !ok {
			t.Fatalf("e2e lacks %q: %v", part, r)
		}
		for k, v := range m {
			if f, ok := v.(float64); ok && f < 0 {
				t.Errorf("%s.%s = %v", part, k, f)
			}
		}
	}
	d := r["direct"].(map[string]any)
	for _, k := range []string{"encode_ms", "search_ms", "retrieve_ms", "qps"} {
		if v, _ := d[k].(float64); v <= 0 {
			t.Errorf("direct.%s = %v", k, d[k])
		}
	}
	for _, part := range []string{"http_batch", "http_single"} {
		m := r[part].(map[string]any)
		if v, _ := m["requests"].(float64); v < 1 {
			t.Errorf("%s: %v requests", part, m["requests"])
		}
	}
	if hb := r["http_batch"].(map[string]any); hb["qps"].(float64) != hb["rps"].(float64)*16 {
		t.Errorf("http_batch: qps %v is not rps %v × 16", hb["qps"], hb["rps"])
	}
}

// TestE2ETextsExactTokens: generated queries are distinct and exactly
// the asked number of tokens through the model's tokenizer and prefix.
func TestE2ETextsExactTokens(t *testing.T) {
	model := testutil.Model(t, "tiny")
	t.Setenv("ONNXRUNTIME_LIB", testutil.ORTLib(t))
	enc, err := embed.Open(embed.Config{Dir: model, Provider: "cpu", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	texts, err := e2eTexts(enc, 500, 32, 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, s := range texts {
		if n := len(enc.Tokenize(enc.ModelConfig().QueryPrefix, s)); n != 32 || seen[s] {
			t.Fatalf("%q: %d tokens (repeated %v)", s, n, seen[s])
		}
		seen[s] = true
	}
}

// TestBadCommands: every malformed or out-of-range command answers one
// error line naming the field; none crashes the process.
func TestBadCommands(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"op": "load", "n": 100000000000000}`, `"n" · "dim"`},
		{`{"op": "load", "n": 10, "dim": 100000000}`, `"dim" = 100000000 is above`},
		{`{"op": "load", "n": -3}`, `"n" = -3 must be ≥ 0`},
		{`{"op": "time", "batch": 100000000}`, `"batch" = 100000000 is above`},
		{`{"op": "time", "k": -1}`, `"k" = -1`},
		{`{"op": "http", "seconds": 1e9}`, `"seconds"`},
		{`{"op": "time", "path": "int8"}`, "no index loaded"},
		{`{"op": "e2e", "batch": -5}`, `"batch" = -5`},
		{`{"op": "nope"}`, `unknown op "nope"`},
		{`{"op": "load", "n": 1e3}`, "bad command"},
		{`not json`, "bad command"},
	} {
		rows := serveCPU(t, tc.line)
		if len(rows) != 1 {
			t.Fatalf("%s: %d answers, want 1: %v", tc.line, len(rows), rows)
		}
		r := rows[0]
		if e, _ := r["error"].(string); !strings.Contains(e, tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.line, r, tc.want)
		}
	}
}
