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
