package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

func TestRewardCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "rollouts.jsonl")
	os.WriteFile(in, []byte(`{"id": "a", "golden_answers": ["2009"], "response": "<answer>2009</answer>"}

{"id": "b", "golden_answers": ["2009"], "response": "<answer>1999</answer>"}
{"id": "c", "golden_answers": ["Paris"], "answer": "paris, france"}
`), 0o644)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"reward", "--kind", "qa", "--in", in, "--batch", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d output lines, want 3 (blank input line skipped): %q", len(lines), out.String())
	}
	want := []struct {
		id       string
		em, cont float64
	}{{"a", 1, 1}, {"b", 0, 0}, {"c", 0, 1}}
	for i, l := range lines {
		var r struct {
			ID       string  `json:"id"`
			EM       float64 `json:"em"`
			Contains float64 `json:"contains"`
			F1       float64 `json:"f1"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != want[i].id || r.EM != want[i].em || r.Contains != want[i].cont {
			t.Errorf("line %d = %s, want id %s em %v contains %v", i+1, l, want[i].id, want[i].em, want[i].cont)
		}
	}

	// search-p1 with a reference cache and a non-default weight.
	refs := filepath.Join(dir, "refs.jsonl")
	os.WriteFile(refs, []byte(`{"qid": "q1", "plan": ["search Informant year"]}`+"\n"), 0o644)
	os.WriteFile(in, []byte(`{"id": "a", "qid": "q1", "golden_answers": ["2009"], "response": "<reasoning>1. search Informant year</reasoning><tool_call>Informant year</tool_call><answer>2009</answer>"}`+"\n"), 0o644)
	out.Reset()
	if code := run(context.Background(), []string{"reward", "--kind", "search-p1", "--in", in, "--refs", refs, "--lambda-format", "off"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var p1 struct {
		Total        float64 `json:"total"`
		SRef         float64 `json:"s_ref"`
		RefAvailable bool    `json:"ref_available"`
	}
	json.Unmarshal(out.Bytes(), &p1)
	if !p1.RefAvailable || p1.SRef != 1 || math.Abs(p1.Total-0.9) > 1e-12 {
		t.Errorf("search-p1 output %s: want ref_available, s_ref 1 and total 0.3+0.6 = 0.9 with λ_f 0 (--lambda-format off: 0 would be the default)", out.String())
	}

	for _, tc := range []struct {
		name  string
		args  []string
		input string
		code  int
		msg   string
	}{
		{"bad kind", []string{"--kind", "f1"}, "", 2, "unknown kind"},
		{"bad weight", []string{"--kind", "search-p1", "--alpha", "x"}, "", 2, "--alpha"},
		{"weight out of range", []string{"--kind", "search-p1", "--alpha", "2"}, "", 2, "Alpha"},
		{"bad line", []string{"--kind", "qa"}, "{\"golden_answers\": [\"x\"]}\n{oops\n", 1, "line 2"},
		{"bad field names line", []string{"--kind", "qa"}, "\n{\"golden_answers\": [\"x\"], \"response\": \"\"}\n{\"golden_answers\": 3}\n", 1, "line 3: golden_answers"},
		{"missing refs file", []string{"--kind", "search-p1", "--refs", filepath.Join(dir, "none")}, "", 1, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(in, []byte(tc.input), 0o644)
			errb.Reset()
			code := run(context.Background(), append(append([]string{"reward"}, tc.args...), "--in", in), &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
				t.Errorf("exit %d stderr %q, want %d mentioning %q", code, errb.String(), tc.code, tc.msg)
			}
		})
	}
}

func TestRewardEndpointsFromEnv(t *testing.T) {
	m := map[string]server.Endpoint{}
	if err := addRewardEndpoints(m, nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/v1/rewards/qa", "/v1/rewards/rpl", "/v1/rewards/search-p1", "/v1/rewards/proretrieval"} {
		if _, ok := m[p]; !ok {
			t.Errorf("%s not mounted", p)
		}
	}
	t.Setenv("RLSEARCH_JUDGE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("RLSEARCH_JUDGE_MODEL", "")
	if err := addRewardEndpoints(map[string]server.Endpoint{}, nil); err == nil || !strings.Contains(err.Error(), "Model") {
		t.Errorf("judge URL without model: err %v, want one naming Model", err)
	}
}

// TestRewardRetrievalCommand scores retrieval rollouts from the CLI over
// an index (--index), and refuses them without one.
func TestRewardRetrievalCommand(t *testing.T) {
	dir, _ := buildIndex(t)
	in := filepath.Join(t.TempDir(), "rollouts.jsonl")
	os.WriteFile(in, []byte(`{"id": "a", "response": "<answer>{\"query\": \"capital of Germany\"}</answer>", "gold_ids": ["p2"], "k": 1, "metric": "mrr"}
{"id": "b", "query": "highest mountain", "gold_ids": ["p1"], "k": 1}
`), 0o644)
	code, out, errs := runCmd(t, "reward", "--kind", "retrieval", "--index", dir, "--in", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":"a","reward":1,"metric":"mrr","k":1,"retriever":"bm25"`) || !strings.Contains(lines[0], `"retrieved":["p2"]`) || !strings.Contains(lines[1], `"reward":0`) {
		t.Errorf("output %q: want a rewarded 1 (p2 retrieved first), b 0", out)
	}
	code, _, errs = runCmd(t, "reward", "--kind", "retrieval", "--in", in)
	if code == 0 || !strings.Contains(errs, "--index") {
		t.Errorf("without --index: exit %d, %q; want an error naming --index", code, errs)
	}
}
