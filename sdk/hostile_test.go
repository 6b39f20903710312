package sdk

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/transcript"
)

// TestHostileTranscript runs testdata/hostile.txt: hostile programs and
// programs at the edge of each budget, through a runtime over the wiki
// BM25 index with whitespace tokens (so that the printed-document cap is
// reached before BoundTokens' larger token counts pre-empt it) and a time
// budget of 5 s that none of them may need: every stop here is counted
// (steps, recursion, charged bytes, bytes, documents, calls), so the
// outputs are the same on every machine. `run [quoted] [BUDGET=N ...]`
// runs the input as the program (transcript.Expand pieces when quoted),
// the budgets lowered to the arguments (max_steps, max_calls,
// max_candidates, max_width, max_printed_docs, max_observation_tokens,
// max_source_bytes, max_memory_bytes), and prints the result code, the
// error, the stats, the printed ids and the observation (hostileOutput).
// Every case also checks that an error's observation ends with its error
// line and that no observation passes the byte cap.
func TestHostileTranscript(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{Tokens: WhitespaceTokens{}, Budgets: Budgets{Timeout: 5 * time.Second}})
	transcript.Run(t, "testdata/hostile.txt", func(t *testing.T, c *transcript.Case) string {
		if c.Cmd != "run" {
			t.Fatalf("%s: unknown command %q (want run)", c.Pos(), c.Cmd)
		}
		src := c.Input
		var b Budgets
		lowered := false
		for _, a := range c.Args {
			if a.Key == "quoted" {
				var err error
				if src, err = transcript.Expand(src); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if len(a.Vals) != 1 {
				t.Fatalf("%s: want %s=N", c.Pos(), a.Key)
			}
			n, err := strconv.ParseInt(a.Vals[0], 10, 64)
			if err != nil {
				t.Fatalf("%s: %s=%q is not an integer", c.Pos(), a.Key, a.Vals[0])
			}
			lowered = true
			switch a.Key {
			case "max_steps":
				b.MaxSteps = uint64(n)
			case "max_calls":
				b.MaxCalls = int(n)
			case "max_candidates":
				b.MaxCandidates = int(n)
			case "max_width":
				b.MaxWidth = int(n)
			case "max_printed_docs":
				b.MaxPrintedDocs = int(n)
			case "max_observation_tokens":
				b.MaxObservationTokens = int(n)
			case "max_source_bytes":
				b.MaxSourceBytes = int(n)
			case "max_memory_bytes":
				b.MaxMemoryBytes = n
			default:
				t.Fatalf("%s: unknown argument %q", c.Pos(), a.Key)
			}
		}
		req := Request{Code: src}
		if lowered {
			req.Budgets = &b
		}
		res := rt.Run(context.Background(), req, nil)
		if res.Code != CodeOK && !strings.Contains(res.Observation, "Error ("+string(res.Code)+")") {
			t.Errorf("observation %.200q lacks the error line", res.Observation)
		}
		if len(res.Observation) > DefaultMaxObservationBytes+1024 {
			t.Errorf("observation of %d bytes", len(res.Observation))
		}
		return hostileOutput(res)
	})
}

// hostileOutput prints a Result for testdata/hostile.txt. An observation
// over hostileObsLines lines or hostileObsBytes bytes is shortened to its
// first and last lines around a line giving what was left out, and a line
// over hostileLineBytes bytes to its head and its length, so that a
// 256 KiB observation stays readable; what is left out is counted, so the
// output is still exact. Bytes that are not printable text are escaped
// (transcript.Printable).
func hostileOutput(res Result) string {
	const hostileObsLines, hostileObsBytes, hostileLineBytes, keepHead, keepTail = 30, 4000, 300, 8, 4
	var b strings.Builder
	fmt.Fprintf(&b, "code: %s\n", res.Code)
	if res.Error != "" {
		fmt.Fprintf(&b, "error: %s\n", transcript.Printable(res.Error))
	}
	s := res.Stats
	fmt.Fprintf(&b, "stats: calls=%d candidates=%d reranks=%d printed_docs=%d printed_tokens=%d steps=%d memory_bytes=%d\n",
		s.RetrievalCalls, s.Candidates, s.Reranks, s.PrintedDocs, s.PrintedTokens, s.Steps, s.MemoryBytes)
	fmt.Fprintf(&b, "printed: %v\n", res.PrintedIDs)
	obs := strings.TrimSuffix(res.Observation, "\n")
	if res.Observation == "" {
		b.WriteString("observation: (empty)\n")
		return b.String()
	}
	if !strings.HasSuffix(res.Observation, "\n") {
		b.WriteString("observation (no final newline):\n")
	} else {
		b.WriteString("observation:\n")
	}
	lines := strings.Split(obs, "\n")
	if len(lines) > hostileObsLines || len(obs) > hostileObsBytes {
		head, tail := lines[:min(keepHead, len(lines))], lines[max(len(lines)-keepTail, min(keepHead, len(lines))):]
		leftBytes := 0 // each line with its newline
		for _, l := range lines[len(head) : len(lines)-len(tail)] {
			leftBytes += len(l) + 1
		}
		lines = append(append(slices.Clone(head), fmt.Sprintf("... %d lines (%d bytes) left out ...", len(lines)-len(head)-len(tail), leftBytes)), tail...)
	}
	for _, l := range lines {
		fmt.Fprintf(&b, "| %s\n", transcript.Printable(cutLine(l, hostileLineBytes)))
	}
	return b.String()
}

// cutLine shortens a line over n bytes to its first n bytes and its length.
func cutLine(l string, n int) string {
	if len(l) <= n {
		return l
	}
	return fmt.Sprintf("%s... (%d bytes)", l[:n], len(l))
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
