package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspectCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "rollouts.jsonl")
	gold := filepath.Join(dir, "questions.jsonl")
	os.WriteFile(gold, []byte(`{"id": "q1", "question": "Where is Paris?", "golden_answers": ["France"], "gold_passage_ids": ["p1"]}`+"\n"), 0o644)
	os.WriteFile(in, []byte(`{"id": "q1", "prompt": "Q", "response": "<search>paris</search><information>Doc 1(Title: Paris) x\n</information><answer>France</answer>"}
not json
{"input": "Question: Where is Paris?", "output": "<answer>Spain</answer>"}
`), 0o644)
	out := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"inspect", in, "--out", out, "--gold", gold, "--rewards", "qa,rpl"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "inspect: 2 rollouts, 1 bad lines") || !strings.Contains(stderr.String(), "line 2: invalid JSON") {
		t.Errorf("stdout %q stderr %q: want 2 rollouts, 1 bad line named", stdout.String(), stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil || !bytes.Contains(page, []byte("Content-Security-Policy")) || !bytes.Contains(page, []byte(`id="rl-details-0"`)) {
		t.Fatalf("report %d bytes, %v: want the CSP and the rollouts", len(page), err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"inspect", in}, "--out"},
		{[]string{"inspect", "--out", out}, "want one rollout dump"},
		{[]string{"inspect", in, "--out", out, "--rewards", "qa,nope"}, "unknown kind"},
		{[]string{"inspect", in, "--out", out, "--gold", filepath.Join(dir, "missing")}, "--gold"},
	} {
		stderr.Reset()
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", tc.args, code, stderr.String(), tc.msg)
		}
	}
}
