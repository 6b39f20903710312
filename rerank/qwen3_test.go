package rerank

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

func openTest(tb testing.TB, cfg Config) *Reranker {
	tb.Helper()
	cfg.ORTLib = testutil.ORTLib(tb)
	r, err := Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// testDocs are documents of assorted lengths (so batches need padding).
func testDocs(n int) []string {
	words := strings.Fields("the river flows through the old city of Paris and its bridges were built in many centuries by kings 北京 😀 --- ...")
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for k := range 3 + (i*7)%40 {
			sb.WriteString(words[(i+k*3)%len(words)])
			sb.WriteByte(' ')
		}
		out[i] = strings.TrimSpace(sb.String())
	}
	return out
}

// TestQwen3PromptGolden pins the prompt to the Qwen3-Reranker model card's
// format: prefix, format_instruction(instruction, query, doc), suffix.
func TestQwen3PromptGolden(t *testing.T) {
	got := Qwen3Prompt(DefaultInstruction, "What is the capital of China?", "The capital of China is Beijing.")
	want := "<|im_start|>system\n" +
		"Judge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n" +
		"<|im_start|>user\n" +
		"<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n" +
		"<Query>: What is the capital of China?\n" +
		"<Document>: The capital of China is Beijing." +
		"<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
	if got != want {
		t.Fatalf("prompt differs from the model card:\ngot  %q\nwant %q", got, want)
	}
}

// TestQwen3PairTokens checks the ids of one pair: prefix, body and suffix
// tokenized separately (as the model card does) and equal to Hugging Face's
// ids for each part.
func TestQwen3PairTokens(t *testing.T) {
	dir := qwen3Model(t, "last")
	r := openTest(t, Config{Dir: dir, Sessions: 1})
	q, d := "What is the capital of China?", "The capital of China is Beijing."
	ids, _ := r.encodePair(q, d)
	parts := []string{Qwen3Prefix, qwen3Body(DefaultInstruction, q, d), Qwen3Suffix}
	hf := testutil.OracleEncode(t, qwen3TokenizerPath(t), parts, 0)
	want := slices.Concat(hf...)
	if !slices.Equal(ids, want) {
		t.Fatalf("pair ids differ from HF:\ngot  %v\nwant %v", ids, want)
	}
	if r.yesID != 9693 || r.noID != 2152 {
		t.Errorf("yes/no ids %d/%d, want 9693/2152 (Qwen3 vocab)", r.yesID, r.noID)
	}
}

func TestQwen3Truncation(t *testing.T) {
	dir := qwen3Model(t, "last")
	for _, maxLen := range []int{100, 101, 150} {
		t.Run(fmt.Sprint(maxLen), func(t *testing.T) {
			r := openTest(t, Config{Dir: dir, Sessions: 1, MaxLength: maxLen})
			ids, _ := r.encodePair("q", strings.Repeat("long document text ", 200))
			if len(ids) != maxLen {
				t.Fatalf("len = %d, want MaxLength %d", len(ids), maxLen)
			}
			if !slices.Equal(ids[len(ids)-len(r.suffix):], r.suffix) || !slices.Equal(ids[:len(r.prefix)], r.prefix) {
				t.Fatal("truncation cut the prompt template")
			}
			short, _ := r.encodePair("q", "short")
			if len(short) >= maxLen {
				t.Fatalf("short pair has %d tokens", len(short))
			}
		})
	}
	if _, err := Open(Config{Dir: dir, ORTLib: testutil.ORTLib(t), MaxLength: 20}); err == nil {
		t.Error("Open accepted a MaxLength smaller than the template")
	}
}

// TestQwen3MatchesReference compares the Go scores (ORT, padded batches)
// with the generator's independent float64 numpy forward on each unpadded
// sequence, for both export variants.
func TestQwen3MatchesReference(t *testing.T) {
	for _, variant := range []string{"full", "last"} {
		t.Run(variant, func(t *testing.T) {
			dir := qwen3Model(t, variant)
			r := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 8})
			if r.fullLogits != (variant == "full") {
				t.Fatalf("fullLogits = %v for variant %s", r.fullLogits, variant)
			}
			query := "who built the bridges of Paris?"
			docs := testDocs(8)
			if variant == "full" {
				docs = docs[:4] // full logits cost seq*151,669 floats per row
			}
			logits := make([][2]float64, len(docs))
			scores, err := r.score(context.Background(), query, docs, logits)
			if err != nil {
				t.Fatal(err)
			}
			req := struct {
				IDs    [][]int32 `json:"input_ids"`
				Tokens []int32   `json:"token_ids"`
			}{Tokens: []int32{r.noID, r.yesID}}
			for _, d := range docs {
				ids, _ := r.encodePair(query, d)
				req.IDs = append(req.IDs, ids)
			}
			var resp struct {
				Logits [][2]float64 `json:"logits"`
			}
			testutil.RunReference(t, "gen_qwen3.py", dir, req, &resp)
			spread, worst := 0.0, 0.0
			for i := range docs {
				ref := resp.Logits[i]
				for k := range 2 {
					d := math.Abs(logits[i][k] - ref[k])
					worst = max(worst, d)
					if d > 2e-4*max(1, math.Abs(ref[k])) {
						t.Errorf("doc %d logit %d: go %.6f numpy %.6f", i, k, logits[i][k], ref[k])
					}
				}
				want := 1 / (1 + math.Exp(ref[0]-ref[1]))
				if d := math.Abs(float64(scores[i]) - want); d > 1e-4 {
					t.Errorf("doc %d score: go %.6f numpy %.6f", i, scores[i], want)
				}
				spread = max(spread, math.Abs(float64(scores[i]-scores[0])))
			}
			if spread < 1e-3 {
				t.Errorf("scores barely differ (%v): the test model does not discriminate", scores)
			}
			t.Logf("%s: %d pairs, max |logit(go) - logit(numpy)| = %.2g, score spread %.3f", variant, len(docs), worst, spread)
		})
	}
}

// TestBatchedEqualsUnbatched: padding inside a batch must not change a score.
func TestBatchedEqualsUnbatched(t *testing.T) {
	cases := []struct{ name, script, variant string }{
		{"qwen3-full", "qwen3", "full"},
		{"qwen3-last", "qwen3", "last"},
		{"cross-encoder", "cross", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if tc.script == "qwen3" {
				dir = qwen3Model(t, tc.variant)
			} else {
				dir = crossModel(t, 1)
			}
			batched := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 16, BatchWait: 20 * time.Millisecond})
			single := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 1})
			docs := testDocs(20)
			if tc.variant == "full" {
				docs = docs[:6] // full logits cost seq*151,669 floats per row
			}
			ctx := context.Background()
			all, err := batched.score(ctx, "query about bridges", docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i, d := range docs {
				one, err := single.score(ctx, "query about bridges", []string{d}, nil)
				if err != nil {
					t.Fatal(err)
				}
				diff := math.Abs(float64(one[0] - all[i]))
				worst = max(worst, diff)
				if diff > 1e-5 {
					t.Errorf("doc %d: batched %.7f, alone %.7f (diff %.2g > 1e-5)", i, all[i], one[0], diff)
				}
			}
			t.Logf("%s: %d documents, max |batched - alone| = %.2g", tc.name, len(docs), worst)
		})
	}
}

// TestExternalData opens a model whose weights live in model.onnx.data
// (how exports over 2 GB are stored) and checks it scores like the
// single-file model with the same seed.
func TestExternalData(t *testing.T) {
	ext := genModel(t, "gen_qwen3.py", "--variant", "last", "--seed", "1", "--tokenizer", qwen3TokenizerPath(t), "--external-data")
	if _, err := os.Stat(filepath.Join(ext, "model.onnx.data")); err != nil {
		t.Fatalf("generator wrote no external data: %v", err)
	}
	ctx := context.Background()
	docs := testDocs(3)
	want, err := openTest(t, Config{Dir: qwen3Model(t, "last"), Sessions: 1}).score(ctx, "q", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := openTest(t, Config{Dir: ext, Sessions: 1}).score(ctx, "q", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("external-data model scores %v, single file %v", got, want)
	}
}

// TestFullLogitsSplit: a batch split to respect MaxLogitsBytes scores
// the same as one run.
func TestFullLogitsSplit(t *testing.T) {
	dir := qwen3Model(t, "full")
	docs := testDocs(3)
	ctx := context.Background()
	whole := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 8, BatchWait: 20 * time.Millisecond})
	split := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 8, BatchWait: 20 * time.Millisecond, MaxLogitsBytes: 64 << 20})
	a, err := whole.score(ctx, "q", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := split.score(ctx, "q", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-5 {
			t.Errorf("doc %d: one run %.7f, split %.7f", i, a[i], b[i])
		}
	}
	// Probe + 1 run vs probe + one run per pair (each row is > 32 MB).
	if w, s := whole.runs.Load(), split.runs.Load(); w != 1 || s != int64(len(docs)) {
		t.Errorf("ORT runs: whole %d (want 1), split %d (want %d)", w, s, len(docs))
	}
}

// TestConcurrentCallsShareBatches runs many concurrent Rerank calls and
// checks every score against a sequential run.
func TestConcurrentCallsShareBatches(t *testing.T) {
	dir := qwen3Model(t, "last")
	r := openTest(t, Config{Dir: dir, Sessions: 2, BatchSize: 16, BatchWait: 5 * time.Millisecond})
	docs := testDocs(12)
	ctx := context.Background()
	want := map[string][]float32{}
	queries := []string{"a", "bridges", "kings of Paris", "北京"}
	for _, q := range queries {
		s, err := r.score(ctx, q, docs, nil)
		if err != nil {
			t.Fatal(err)
		}
		want[q] = s
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := queries[g%len(queries)]
			dd := make([]rlsearch.Document, len(docs))
			for i, d := range docs {
				dd[i] = rlsearch.Document{ID: fmt.Sprint(i), Contents: d}
			}
			got, err := r.Rerank(ctx, q, dd)
			if err != nil {
				t.Error(err)
				return
			}
			for i := range got {
				if math.Abs(float64(got[i]-want[q][i])) > 1e-5 {
					t.Errorf("query %q doc %d: concurrent %.7f, sequential %.7f", q, i, got[i], want[q][i])
				}
			}
		}()
	}
	wg.Wait()
}

func TestRerankEdgeCases(t *testing.T) {
	dir := qwen3Model(t, "last")
	r := openTest(t, Config{Dir: dir, Sessions: 1})
	ctx := context.Background()
	got, err := r.Rerank(ctx, "q", nil)
	if err != nil || len(got) != 0 || got == nil {
		t.Errorf("Rerank(no docs) = %v, %v; want empty non-nil", got, err)
	}
	// Duplicates keep their own (equal) scores, order kept.
	a := rlsearch.Document{ID: "a", Contents: "\"A\"\nalpha text"}
	b := rlsearch.Document{ID: "b", Contents: "\"B\"\nbeta text about something else entirely"}
	s, err := r.Rerank(ctx, "alpha", []rlsearch.Document{a, a, b})
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := r.Rerank(ctx, "alpha", []rlsearch.Document{b})
	if s[0] != s[1] || math.Abs(float64(s[2]-sb[0])) > 1e-5 {
		t.Errorf("scores %v; want s[0]==s[1] and s[2]==%v", s, sb[0])
	}
	for _, v := range s {
		if v < 0 || v > 1 || math.IsNaN(float64(v)) {
			t.Errorf("score %v outside [0, 1]", v)
		}
	}
	// Empty query and document, invalid UTF-8.
	if _, err := r.Rerank(ctx, "", []rlsearch.Document{{}, {Contents: "\xff\xfe"}}); err != nil {
		t.Errorf("empty/invalid text: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Rerank(cctx, "q", []rlsearch.Document{a}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err = %v", err)
	}
	r2 := openTest(t, Config{Dir: dir, Sessions: 1})
	r2.Close()
	if _, err := r2.Rerank(ctx, "q", []rlsearch.Document{a}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err = %v, want ErrClosed", err)
	}
	if err := r2.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := qwen3Model(t, "last")
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"no dir", Config{}},
		{"negative sessions", Config{Dir: dir, Sessions: -1}},
		{"negative threads", Config{Dir: dir, IntraOpThreads: -1}},
		{"negative maxlen", Config{Dir: dir, MaxLength: -1}},
		{"huge batch", Config{Dir: dir, BatchSize: 1 << 20}},
		{"negative batch tokens", Config{Dir: dir, MaxBatchTokens: -1}},
		{"missing dir", Config{Dir: t.TempDir()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.ORTLib = testutil.ORTLib(t)
			if r, err := Open(tc.cfg); err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

// TestTokenChunks: runs are sorted by length and cut so that batch × the
// longest pair stays within the budget; a pair over the budget runs alone.
func TestTokenChunks(t *testing.T) {
	job := func(n int) *pairJob { return &pairJob{ids: make([]int32, n)} }
	for _, tc := range []struct {
		name   string
		lens   []int
		budget int
		want   [][]int
	}{
		{"empty", nil, 100, nil},
		{"one", []int{7}, 100, [][]int{{7}}},
		{"one over budget", []int{500}, 100, [][]int{{500}}},
		{"all fit", []int{10, 30, 20}, 100, [][]int{{10, 20, 30}}},
		{"exactly the budget", []int{25, 25, 25, 25}, 100, [][]int{{25, 25, 25, 25}}},
		{"long alone", []int{10, 8192, 12, 9, 11}, 8192, [][]int{{9, 10, 11, 12}, {8192}}},
		{"long pair and short", []int{8192, 100}, 8192, [][]int{{100}, {8192}}},
		{"similar long ones share", []int{3000, 10, 2900}, 8192, [][]int{{10, 2900}, {3000}}},
		{"over budget each", []int{300, 200, 400}, 100, [][]int{{200}, {300}, {400}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := make([]*pairJob, len(tc.lens))
			for i, n := range tc.lens {
				jobs[i] = job(n)
			}
			var got [][]int
			for _, run := range tokenChunks(jobs, tc.budget) {
				var lens []int
				for _, j := range run {
					lens = append(lens, len(j.ids))
				}
				got = append(got, lens)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("runs %v, want %v", got, tc.want)
			}
		})
	}
}

// TestLongPairRunsAlone: one long document among short ones gets an ORT
// run of its own instead of padding the short ones to its length, no run
// exceeds the token budget, and the scores equal one pair per run.
func TestLongPairRunsAlone(t *testing.T) {
	dir := qwen3Model(t, "last")
	const budget = 1024
	r := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 16, BatchWait: 50 * time.Millisecond, MaxBatchTokens: budget})
	var mu sync.Mutex
	var shapes [][2]int
	r.onRun = func(b, seq int) {
		mu.Lock()
		shapes = append(shapes, [2]int{b, seq})
		mu.Unlock()
	}
	docs := testDocs(5)
	long := strings.Repeat("the river flows through the old city of Paris ", 80) // ~800 tokens
	docs = slices.Insert(docs, 2, long)
	ctx := context.Background()
	got, err := r.score(ctx, "q", docs, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	runs := slices.Clone(shapes)
	mu.Unlock()
	longSeq := 0
	for _, s := range runs {
		if s[0] > 1 && s[0]*s[1] > budget {
			t.Errorf("run of %d pairs × %d tokens exceeds the %d-token budget", s[0], s[1], budget)
		}
		longSeq = max(longSeq, s[1])
	}
	if longSeq <= budget/2 {
		t.Fatalf("long document is only %d tokens; the test needs one over half the budget", longSeq)
	}
	if len(runs) != 2 || runs[0][0] != len(docs)-1 || runs[1] != [2]int{1, longSeq} {
		t.Errorf("runs (batch, seq) %v, want the %d short pairs in one run and the long one alone", runs, len(docs)-1)
	}
	single := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 1})
	for i, d := range docs {
		one, err := single.score(ctx, "q", []string{d}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := math.Abs(float64(got[i] - one[0])); diff > 1e-5 {
			t.Errorf("doc %d: batched %.7f, alone %.7f (diff %.2g > 1e-5)", i, got[i], one[0], diff)
		}
	}
}
