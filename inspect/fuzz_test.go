package inspect

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// FuzzAnalyze: any line is either a bad line (ErrBadLine) or a rollout
// whose JSON encodes (the page's detail), never a panic. Found cases live
// in testdata/fuzz/FuzzAnalyze.
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		`{"id": "a", "question": "q", "golden_answers": ["x"], "response": "<code>print(sparse(question, k=3))</code><information>Doc 1(Title: T) x\n</information><answer>x</answer>"}`,
		`{"turns": [{"role": "model", "text": "<code>print(1)</code>"}, {"role": "observation", "text": "Error (syntax_error): x", "stats": {"retrieval_calls": 2}}]}`,
		`{"messages": [{"role": "assistant", "content": [{"text": "a"}], "tool_calls": [{"function": {"arguments": "{\"code\": \"x\"}"}}]}, {"role": "tool", "content": "Doc 9(Title: a) b"}]}`,
		`{"input": "Q", "output": "<information>Doc 1(Title: ) \n</information>", "gts": "a"}`,
		`{"response": "<answer>{\"sql\": \"WHERE a\"}</answer>", "ground_truth": ["p"], "executed": true, "ranked": ["p"]}`,
		`{"turns": [{"observation": "Doc 1(Title: x)", "printed_ids": ["a"]}], "response": "<information>x</information>"}`,
		`{"id": 1.5e300, "golden_answers": [[["a"]], null, 3], "response": "<tool_call>{\"query\": \"x\"}</tool_call>"}`,
	} {
		f.Add([]byte(s))
	}
	an, err := NewAnalyzer(AnalyzerConfig{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := an.Analyze(context.Background(), line, 1, 0)
		if err != nil {
			if !errors.Is(err, ErrBadLine) {
				t.Fatalf("error %v does not wrap ErrBadLine", err)
			}
			return
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("rollout does not encode: %v", err)
		}
		_ = newRow(r)
	})
}
