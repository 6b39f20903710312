package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdtest"
	"github.com/rlsearch/rlsearch/hybrid"
)

func TestEval(t *testing.T) {
	dir, questions := buildIndex(t)
	code, out, errs := runCmd(t, "eval", "--index", dir, "--questions", questions, "--k", "1,2")
	if code != 0 || !strings.Contains(out, "any@1") || !strings.Contains(out, "toy") {
		t.Fatalf("eval: code %d\n%s\n%s", code, out, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	dir, _ := buildIndex(t)
	other := filepath.Join(t.TempDir(), "other.jsonl")
	os.WriteFile(other, []byte(`{"question": "q", "gold_passage_ids": ["wiki-999999"]}`+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: rlsearch-bench"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"eval", "--index", dir, "--k", "1,x"}, 2, `bad k "x"`},
		{[]string{"eval", "--index", dir, "--questions", other}, 1, "none of the 1 gold passage ids is in the index"},
		{[]string{"eval"}, 2, "--index is required"},
		{[]string{"index", "--questions", other}, 2, "--index is required"},
		{[]string{"compare", "a.json"}, 2, "want OLD.json NEW.json"},
		{[]string{"render", "a.json"}, 2, "--out is required"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want code %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestMutateEval: the question-set experiment of the mutation verifier
// (formerly `rlsearch mutate --eval`).
func TestMutateEval(t *testing.T) {
	dir, questions := buildIndex(t)
	code, stdout, stderr := runCmd(t, "mutate-eval", "--index", dir, "--questions", questions, "--datasets", "toy", "--quiet")
	var sum struct {
		Groups map[string]struct {
			Questions, Verified int
			Distances           map[string]int `json:"distance_histogram"`
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil || sum.Groups["all"].Questions != 2 || sum.Groups["toy"].Questions != 2 {
		t.Fatalf("mutate-eval: code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mutate-eval", "--index", dir, "--questions", questions, "--datasets", "nope"}, 2, "no questions"},
		{[]string{"mutate-eval", "--index", dir, "--executions", "257"}, 2, "Executions"},
		{[]string{"mutate-eval", "--index", dir, "--workers", "0"}, 2, "--workers 0 must be ≥ 1"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

// TestHybridGenEval generates instances of a toy collection and scores
// their gold programs and a bad prediction (formerly `rlsearch hybrid gen`
// and `rlsearch hybrid eval`).
func TestHybridGenEval(t *testing.T) {
	schemaPath, data := cmdtest.WriteToys(t)
	schema, err := hybrid.ResolveSchema(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	col := filepath.Join(tmp, "cols", "toys")
	if _, err := hybrid.Build(context.Background(), hybrid.BuildConfig{Schema: schema, Data: data, Dir: col}); err != nil {
		t.Fatal(err)
	}
	inst := filepath.Join(tmp, "inst.jsonl")
	code, out, errs := runCmd(t, "hybrid-gen", "--collection", col, "--n", "10", "--seed", "4", "--verbalize", "template", "--out", inst)
	raw, _ := os.ReadFile(inst)
	if code != 0 || strings.Count(string(raw), "\n") == 0 || !strings.Contains(string(raw), `"query":"toys where`) || !strings.Contains(errs, "generated") {
		t.Fatalf("gen: %d %s %s\n%s", code, out, errs, raw)
	}
	code, out, errs = runCmd(t, "hybrid-eval", "--collection", col, "--instances", inst)
	var rep struct {
		All map[string]float64 `json:"all"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.All["hit@1"] != 1 || rep.All["exec_success"] != 1 {
		t.Fatalf("eval of gold programs: %d %s %s", code, out, errs)
	}
	// Predictions: one unparsable, the others missing -> execution failures.
	var first struct{ ID string }
	json.Unmarshal([]byte(strings.SplitN(string(raw), "\n", 2)[0]), &first)
	pred := filepath.Join(tmp, "pred.jsonl")
	os.WriteFile(pred, []byte(`{"id": "`+first.ID+`", "program": {"sql": "WHERE brand = 'x' UNION SELECT 1", "retrieval_list": []}}`+"\n"), 0o644)
	code, out, _ = runCmd(t, "hybrid-eval", "--collection", col, "--instances", inst, "--predictions", pred)
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.All["exec_success"] != 0 {
		t.Fatalf("eval of predictions: %d %s", code, out)
	}
	if code, _, _ := runCmd(t, "hybrid-eval", "--collection", col); code != 2 {
		t.Fatalf("missing --instances: exit %d, want 2", code)
	}
}
