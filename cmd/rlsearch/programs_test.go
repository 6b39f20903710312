package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/sdk"
)

func TestProgramsCommand(t *testing.T) {
	dir, _ := buildIndex(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	out := filepath.Join(tmp, "out.jsonl")
	os.WriteFile(in, []byte(`{"id": "a", "code": "print(sparse(question, k=1))", "question": "capital of Germany"}

{"id": "b", "response": "thinking <code>print(fuse([sparse('Paris', k=2), sparse('Everest', k=2)])[:1])</code>"}
{"id": "c", "code": "rerank('x', sparse('Paris', k=2))"}
{"id": "d", "code": "print(dense('Paris'))"}
`), 0o644)
	code, stdout, stderr := runCmd(t, "programs", "--index", dir, "--in", in, "--out", out, "--batch", "2")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "ran 4 programs") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	want := []struct {
		id   string
		code sdk.ErrorCode
		obs  string
	}{
		{"a", sdk.CodeOK, "Doc 1(Title: \"Berlin\") Berlin is the capital of Germany and its largest city.\n"},
		{"b", sdk.CodeOK, "Doc 1(Title: \"Paris\")"},
		{"c", sdk.CodeUnavailable, "no reranker is configured"},
		{"d", sdk.CodeUnavailable, "dense retrieval is not available"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d result lines, want %d:\n%s", len(lines), len(want), raw)
	}
	for i, w := range want {
		var r sdk.Result
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatal(err)
		}
		if r.ID != w.id || r.Code != w.code || !strings.Contains(r.Observation, w.obs) {
			t.Errorf("line %d: got %+v, want id %s code %s observation containing %q", i+1, r, w.id, w.code, w.obs)
		}
	}
	// Bad input names the line; nothing is written.
	os.WriteFile(in, []byte("{\"code\": \"print(1)\"}\n{\"cod\": 1}\n"), 0o644)
	out2 := filepath.Join(tmp, "out2.jsonl")
	code, _, stderr = runCmd(t, "programs", "--index", dir, "--in", in, "--out", out2)
	if code != 1 || !strings.Contains(stderr, "line 2") {
		t.Fatalf("bad line: code %d %s", code, stderr)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Fatal("output written despite bad input")
	}
	if code, _, _ := runCmd(t, "programs", "--index", dir, "--batch", "0"); code != 2 {
		t.Fatalf("--batch 0: exit %d, want 2", code)
	}
}

func TestMutateCommand(t *testing.T) {
	dir, _ := buildIndex(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.jsonl")
	out := filepath.Join(tmp, "out.jsonl")
	// Rollout a: the width-1 program cannot be typed (1 is off the ladder);
	// rollout b: "capital" at width 3 prints all 3 passages of the toy
	// corpus, so the gold p3 is printed by the original already and by the
	// nearest mutation, width 5.
	os.WriteFile(in, []byte(`{"id": "a", "question": "q", "gold_ids": ["p2"], "turns": [{"role": "model", "text": "<code>print(sparse(\"capital\", k=1))</code>"}]}
{"id": "b", "question": "q", "gold_ids": ["p3"], "turns": [{"role": "model", "text": "<code>print(sparse(\"highest mountain\", k=3))</code>"}, {"role": "observation", "text": "..."}]}
`), 0o644)
	code, stdout, stderr := runCmd(t, "mutate", "--index", dir, "--in", in, "--out", out, "--quiet")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "mutate: 2 lines") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), raw)
	}
	var a, b sdk.ProposeResult
	json.Unmarshal([]byte(lines[0]), &a)
	json.Unmarshal([]byte(lines[1]), &b)
	if a.ID != "a" || a.Status != sdk.StatusNotMutable || !strings.Contains(a.Reason, "ladder") {
		t.Errorf("a: %+v", a)
	}
	if b.ID != "b" || b.Status != sdk.StatusVerified || b.Verified[0].Program.Width != 5 || len(b.Contexts) != 1 {
		t.Fatalf("b: %+v", b)
	}

	// Step 2: records from continuations.
	rec := filepath.Join(tmp, "rec.jsonl")
	var tr sdk.Trajectory
	json.Unmarshal([]byte(strings.Split(string(mustRead(t, in)), "\n")[1]), &tr)
	reqs, _ := json.Marshal(sdk.RecordRequest{Trajectory: tr, Program: b.Verified[0].Program, Continuation: "<answer>Everest</answer>"})
	os.WriteFile(rec, append(reqs, '\n'), 0o644)
	code, stdout, stderr = runCmd(t, "mutate", "--index", dir, "--records", "--in", rec, "--quiet")
	var rr sdk.RecordResult
	if code != 0 || json.Unmarshal([]byte(stdout), &rr) != nil || rr.Record == nil || rr.Record.Found != true || rr.Record.Correct {
		t.Fatalf("records: code %d\n%s\n%s", code, stdout, stderr)
	}

	// --eval is rlsearch-bench mutate-eval (its TestMutateEval).

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"mutate", "--index", dir, "--records", "--eval"}, 2, "rlsearch-bench mutate-eval"},
		{[]string{"mutate", "--index", dir, "--workers", "0", "--in", in}, 2, "--workers 0 must be ≥ 1"},
		{[]string{"mutate", "--index", dir, "--executions", "257", "--in", in}, 2, "Executions"},
		{[]string{"mutate", "--index", dir, "--in", rec}, 1, "line 1"},
	} {
		code, _, errs := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
