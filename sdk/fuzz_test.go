package sdk

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzRun feeds arbitrary source to the program entry point: it must never
// panic, must return a known code, and must be deterministic.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		"print(sparse(question, k=3))",
		"docs = fuse([sparse(\"a\", k=5), dense(\"a\", k=5)])\nprint(rerank(\"a\", docs, k=3)[:2])",
		"while True:\n    pass",
		"def f(n):\n    return f(n)\nf(1)",
		"import os",
		"load(\"a\", \"b\")",
		"print(doc(\"x\"))",
		"x = [1, 2, 3]\nprint(sorted(x, reverse=True)[:2], {\"a\": 1})",
		"s = 'x' * 1000\nprint(s[:3])",
		"print(f\"{1}\")",
		"d = sparse('Robin Hood', k=2)\nprint(d[0].title, d[0].routes, d[0] == d[0], d[0] in d)",
		// Issue 13's allocation and range families.
		"a = \"x\"*(1<<29)\nb = a+a\nprint(len(b))",
		"list(range(1<<62))",
		"range(1)[::8192][::8192][::8192][::8192][::8192]",
		"y = list(range(3000))\nz = sorted(y, reverse=True, key=lambda v: -v)\nprint(z[:3])",
		"l = [[1]] * 3\nl[0] += l[1]\nprint('%s %d' % (str(l), len(repr(l))), '-'.join(['a'] * 3).replace('a', 'bb').split('b'))",
		"d = {i: str(i) for i in range(10)}\nd |= {'x': 1}\nprint(d.items()[:2], enumerate(zip([1], [2])), max(range(5)))",
	} {
		f.Add(s)
	}
	rt := newRT(f, wikiIndex(f), Config{Budgets: Budgets{MaxSteps: 20000, Timeout: 2 * time.Second}})
	codes := map[ErrorCode]bool{CodeOK: true, CodeSyntax: true, CodeUnsupported: true, CodeRuntime: true, CodeBudget: true, CodeUnknownDoc: true, CodeConflict: true, CodeUnavailable: true}
	f.Fuzz(func(t *testing.T, src string) {
		req := Request{Code: src, Question: "Robin Hood"}
		a := rt.Run(context.Background(), req, nil)
		if !codes[a.Code] {
			t.Fatalf("code %q (%s) for %q", a.Code, a.Error, src)
		}
		if a.Code != CodeOK && !strings.HasSuffix(a.Observation, "\n") {
			t.Fatalf("error observation %q has no error line", a.Observation)
		}
		if strings.Contains(a.Error, "time budget") {
			return // timing-dependent
		}
		b := rt.Run(context.Background(), req, nil)
		if a.Observation != b.Observation || a.Code != b.Code {
			t.Fatalf("not deterministic for %q:\n%q\n%q", src, a.Observation, b.Observation)
		}
		// Recognize must not panic either, and what it accepts renders and
		// re-recognises to itself.
		if p, err := Recognize(src); err == nil {
			q, err := Recognize(p.Source())
			if err != nil || q.Source() != p.Source() {
				t.Fatalf("Recognize(%q) = %+v, not stable: %v", src, p, err)
			}
		}
	})
}

// FuzzDecodeBatch feeds arbitrary bodies to the batch decoder.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		`{"programs": [{"id": "a", "code": "print(1)"}]}`,
		`{"code": "print(1)", "budgets": {"max_steps": 10, "timeout_ms": 5}}`,
		`{"programs": [{"response": "<code>x</code>"}], "coalesce": false}`,
		`{`, `[]`, `null`, `{"programs": null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		br, _, err := DecodeBatch(bytes.NewReader(body))
		if err != nil {
			return
		}
		if len(br.Programs) == 0 || len(br.Programs) > DefaultMaxBatchPrograms {
			t.Fatalf("accepted %d programs", len(br.Programs))
		}
		for _, p := range br.Programs {
			if p.Code == "" && p.Response == "" {
				t.Fatalf("accepted a program without code: %+v", p)
			}
		}
	})
}
