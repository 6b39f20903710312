package sdk

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

func TestHostilePrograms(t *testing.T) {
	// Whitespace tokens: the document rows test the printed-document cap,
	// which BoundTokens' larger counts would pre-empt.
	rt := newRT(t, wikiIndex(t), Config{Tokens: WhitespaceTokens{}, Budgets: Budgets{Timeout: 5 * time.Second}})
	big := "x = 1\n" + strings.Repeat("# padding padding padding padding padding padding\n", 1<<20/50)
	for _, tc := range []struct {
		name, src string
		code      ErrorCode
		want      string
	}{
		{"infinite loop", "while True:\n    pass", CodeBudget, "step budget"},
		{"infinite loop in a function", "def f():\n    for i in range(1000000000):\n        pass\nf()", CodeBudget, "step budget"},
		{"deep recursion", "def f(n):\n    return f(n + 1)\nf(0)", CodeBudget, "recursion budget exceeded"},
		{"mutual recursion", "def f(n):\n    return g(n)\ndef g(n):\n    return f(n)\nf(0)", CodeBudget, "recursion budget exceeded"},
		{"huge repeat", "s = \"x\" * (1 << 40)", CodeBudget, "memory budget exceeded: the * operation would allocate about 1024.0 GiB"},
		{"huge list", "l = [0] * (1 << 40)", CodeBudget, "memory budget exceeded"},
		{"huge print", "print(\"x\" * (1 << 24))", CodeBudget, "observation budget exceeded"},
		{"10^6 prints", "for i in range(1000000):\n    print(i)", CodeBudget, "observation budget exceeded"},
		{"10^6 document prints", "d = sparse(\"Robin Hood\", k=1)\nfor i in range(1000000):\n    print(d)", CodeBudget, "printed-document budget exceeded"},
		{"width 10^9", "sparse(\"Robin Hood\", k=1000000000)", CodeBudget, "exceeds the cap of 50"},
		{"width 2^70", "sparse(\"Robin Hood\", k=1 << 70)", CodeRuntime, "out of range"},
		{"negative width", "sparse(\"Robin Hood\", k=-5)", CodeRuntime, "must be ≥ 1"},
		{"huge query", "sparse(\"a \" * 100000, k=3)", CodeBudget, "query of 200000 bytes"},
		{"load", "load(\"/etc/passwd\", \"x\")", CodeUnsupported, "load() is not available"},
		{"1 MB program", big, CodeBudget, "source budget"},
		{"deep nesting", strings.Repeat("[", 30000) + strings.Repeat("]", 30000), CodeSyntax, ""},
		{"nested list str", "x = []\nfor i in range(2000):\n    x = [x]\nprint(str(x)[:10])", CodeOK, "[[[[[[[[[["},
		{"null bytes", "print(\"a\x00b\")\x00", CodeSyntax, "NUL byte at offset 8"},
		{"invalid utf-8", "print(\"\xff\xfe\")", CodeOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			res := rt.Run(context.Background(), Request{Code: tc.src}, nil)
			if res.Code != tc.code || !strings.Contains(res.Observation, tc.want) {
				t.Fatalf("got %s %.300q, want %s containing %q", res.Code, res.Observation, tc.code, tc.want)
			}
			if tc.code != CodeOK && !strings.Contains(res.Observation, "Error ("+string(tc.code)+")") {
				t.Fatalf("observation %.200q lacks the error line", res.Observation)
			}
			if len(res.Observation) > DefaultMaxObservationBytes+1024 {
				t.Fatalf("observation of %d bytes", len(res.Observation))
			}
			t.Logf("%s in %v: %.120q", res.Code, time.Since(start), res.Error)
		})
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Budgets: Budgets{MaxSteps: 1 << 40, Timeout: 200 * time.Millisecond}})
	res := rt.Run(context.Background(), Request{Code: "while True:\n    pass"}, nil)
	if res.Code != CodeBudget || !strings.Contains(res.Error, "time budget of 200ms exceeded") {
		t.Fatalf("got %s %q", res.Code, res.Error)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res = rt.Run(ctx, Request{Code: "while True:\n    pass"}, nil)
	if res.Code != CodeCancelled || !strings.Contains(res.Error, "cancelled") {
		t.Fatalf("cancelled: got %s %q", res.Code, res.Error)
	}
}

func TestMemoryStop(t *testing.T) {
	// The per-program charge (64 MiB) stops these long before the process
	// guard (1 GiB).
	rt := newRT(t, wikiIndex(t), Config{MaxHeapBytes: 1 << 30, Budgets: Budgets{MaxSteps: 1 << 40, Timeout: 5 * time.Minute}})
	for _, src := range []string{
		"l = []\nfor i in range(100000000):\n    l.append(\"%d\" % i)",
		"s = \"x\"\nfor i in range(40):\n    s = s + s",
	} {
		res := rt.Run(context.Background(), Request{Code: src}, nil)
		if res.Code != CodeBudget || !strings.Contains(res.Error, "memory budget exceeded") {
			t.Fatalf("%q: got %s %q", src, res.Code, res.Error)
		}
	}
}

// TestHeapGuardOverloaded: a program stopped by the process heap guard
// (not by its own charged budget) ends "overloaded", and Serve answers the
// request with rlsearch.ErrOverloaded (HTTP 503, Retry-After) instead of
// an observation that would depend on the process's other garbage.
func TestHeapGuardOverloaded(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{MaxHeapBytes: 8 << 20, Budgets: Budgets{MaxMemoryBytes: 1 << 30, MaxSteps: 1 << 40, Timeout: time.Minute}})
	src := "l = []\nfor i in range(100000000):\n    l.append(\"%d\" % i)"
	res := rt.Run(context.Background(), Request{Code: src}, nil)
	if res.Code != CodeOverloaded || !strings.Contains(res.Error, "overloaded") {
		t.Fatalf("got %s %q; want overloaded", res.Code, res.Error)
	}
	_, err := rt.Serve(context.Background(), BatchRequest{Programs: []Request{{Code: "print(1)"}, {Code: src}}})
	if !errors.Is(err, rlsearch.ErrOverloaded) {
		t.Fatalf("Serve: %v; want rlsearch.ErrOverloaded", err)
	}
}

// slowRetriever waits before answering, or until ctx ends.
type slowRetriever struct {
	rlsearch.Retriever
	d time.Duration
}

func (s slowRetriever) Retrieve(ctx context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	select {
	case <-time.After(s.d):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Retriever.Retrieve(ctx, qs, k)
}

func TestTimeoutWhileRetrieving(t *testing.T) {
	ix := wikiIndex(t)
	rt := newRT(t, ix, Config{
		Retrievers: map[string]rlsearch.Retriever{"bm25": slowRetriever{ix.Retrievers()["bm25"], 2 * time.Second}},
		Budgets:    Budgets{Timeout: 100 * time.Millisecond},
	})
	req := Request{Code: "print(\"start\")\nprint(sparse(\"Robin Hood\", k=3))"}
	results := append([]Result{rt.Run(context.Background(), req, nil)}, rt.RunBatch(context.Background(), []Request{req, req}, BatchOptions{NoCoalesce: true})...)
	results = append(results, rt.RunBatch(context.Background(), []Request{req, req}, BatchOptions{})...)
	for _, res := range results {
		if res.Code != CodeBudget || !strings.HasPrefix(res.Observation, "start\nError (budget_exceeded): line 2: time budget of 100ms exceeded") {
			t.Fatalf("got %s %q", res.Code, res.Observation)
		}
	}
}
