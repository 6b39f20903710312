package inspect_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server/app"
)

// wikiQ is a question of wiki_multihop/questions.jsonl.
type wikiQ struct {
	ID             string   `json:"id"`
	Question       string   `json:"question"`
	GoldenAnswers  []string `json:"golden_answers"`
	GoldPassageIDs []string `json:"gold_passage_ids"`
	GoldTitles     []string `json:"gold_titles"`
}

// wikiEnv is a BM25 index of wiki_multihop built once per test binary,
// with a program runtime over it.
type wikiEnv struct {
	dir, ixDir, questionsPath string
	questions                 []wikiQ
	rt                        *sdk.Runtime
	ix                        *index.Index
}

var (
	wikiOnce sync.Once
	wiki     *wikiEnv
	wikiErr  error
)

func getWiki(tb testing.TB) *wikiEnv {
	tb.Helper()
	data := filepath.Join(testutil.DataDir(tb), "wiki_multihop")
	wikiOnce.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "inspect-wiki-*")
		if err != nil {
			wikiErr = err
			return
		}
		w := &wikiEnv{dir: dir, ixDir: filepath.Join(dir, "ix"), questionsPath: filepath.Join(data, "questions.jsonl")}
		if _, err := index.Build(ctx, index.BuildConfig{Corpus: filepath.Join(data, "corpus.jsonl"), Dir: w.ixDir}); err != nil {
			wikiErr = err
			return
		}
		if w.ix, err = index.Open(ctx, w.ixDir, index.OpenConfig{}); err != nil {
			wikiErr = err
			return
		}
		if w.rt, err = sdk.New(sdk.Config{Retrievers: w.ix.Retrievers(), Docs: w.ix}); err != nil {
			wikiErr = err
			return
		}
		f, err := os.Open(w.questionsPath)
		if err != nil {
			wikiErr = err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var q wikiQ
			if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
				wikiErr = err
				return
			}
			if len(q.GoldenAnswers) > 0 {
				w.questions = append(w.questions, q)
			}
		}
		wiki = w
	})
	if wikiErr != nil {
		tb.Fatalf("wiki_multihop index: %v", wikiErr)
	}
	return wiki
}

// genProgram is one program of a generated rollout and what it printed.
type genProgram struct {
	src string
	res sdk.Result
}

// genRollout is one generated rollout and what the test knows about it,
// independently of the inspector's reading of the dump.
type genRollout struct {
	id       string
	q        wikiQ
	format   string
	line     []byte
	programs []genProgram
	response string // the text of the non-prompt turns, as the dump gives it
	printed  bool   // the dump carries printed_ids and stats
	answer   string // gold, wrong, none, blank, repeat
}

// Answer kinds of generated rollouts.
var answerKinds = []struct {
	name string
	p    float64
}{{"gold", 0.5}, {"wrong", 0.25}, {"none", 0.08}, {"blank", 0.05}, {"repeat", 0.12}}

func pick[T any](rng *rand.Rand, xs []T, p func(T) float64) T {
	u := rng.Float64()
	for _, x := range xs {
		if u -= p(x); u < 0 {
			return x
		}
	}
	return xs[len(xs)-1]
}

// programSource returns the source of program kind k for q.
func programSource(rng *rand.Rand, q wikiQ, k int) string {
	words := strings.Fields(q.Question)
	short := strings.Join(words[:min(len(words), 5)], " ")
	switch {
	case k < 40:
		return sdk.Program{Queries: []string{q.Question}, Mode: sdk.ModeSparse, Width: 3, Print: 3}.Source()
	case k < 60:
		return sdk.Program{Queries: []string{q.Question, short}, Mode: sdk.ModeSparse, Width: 5, Print: 3}.Source()
	case k < 75:
		return sdk.Program{Queries: []string{short}, Mode: sdk.ModeSparse, Width: 10, Print: 5}.Source()
	case k < 82:
		return "docs = sparse(question, k=20)\nkeep = [d for d in docs if len(d.text) > 200]\nprint(keep[:4])\n"
	case k < 88:
		return "print(sparse(question, k=100))\n" // budget_exceeded: width over the cap of 50
	case k < 94:
		return "print(sparse(question, k=3)\n" // syntax_error
	}
	return sdk.Program{Queries: []string{q.Question}, Mode: sdk.ModeFuse, Width: 5, Print: 3}.Source() // unavailable: no dense route
}

// genDump writes n rollouts made from the real wiki_multihop questions,
// programs run on the real BM25 index, to path, in the four formats. Seed 1.
func genDump(tb testing.TB, w *wikiEnv, path string, n int) []genRollout {
	tb.Helper()
	rng := rand.New(rand.NewSource(1))
	ctx := context.Background()
	var out []genRollout
	var buf bytes.Buffer
	for k := range n {
		q := w.questions[k%len(w.questions)]
		other := w.questions[(k*7+3)%len(w.questions)]
		g := genRollout{q: q, answer: pick(rng, answerKinds, func(a struct {
			name string
			p    float64
		}) float64 {
			return a.p
		}).name}
		nprog := 1
		switch u := rng.Float64(); {
		case u < 0.05:
			nprog = 0
		case u < 0.15:
			nprog = 2
		}
		for range nprog {
			src := programSource(rng, q, rng.Intn(100))
			res := w.rt.Run(ctx, sdk.Request{Code: src, Question: q.Question}, nil)
			g.programs = append(g.programs, genProgram{src, res})
		}
		var final string
		switch g.answer {
		case "gold":
			final = "<answer>" + q.GoldenAnswers[0] + "</answer>"
		case "wrong":
			final = "<answer>" + other.GoldenAnswers[0] + "</answer>"
		case "none":
			final = "I could not find the answer."
		case "blank":
			final = "<answer> </answer>"
		case "repeat":
			final = "<answer>" + other.GoldenAnswers[0] + "</answer>\n<answer>unknown</answer>\n<answer>" + q.GoldenAnswers[0] + "</answer>"
		}
		final = "<think>done</think>\n" + final
		prompt := "Answer the question with search. Question: " + q.Question + "\n"
		g.id = fmt.Sprintf("r%04d", k)
		obsText := func(p genProgram) string {
			return strings.Replace(sdk.DefaultObservationTemplate, "{observation}", p.res.Observation, 1)
		}
		modelText := func(i int, p genProgram) string {
			return fmt.Sprintf("<think>step %d</think>\n<code>\n%s</code>", i+1, p.src)
		}
		var line map[string]any
		switch u := rng.Float64(); {
		case u < 0.4:
			g.format, g.printed = "turns", true
			turns := []map[string]any{{"role": "prompt", "text": prompt}}
			for i, p := range g.programs {
				turns = append(turns, map[string]any{"role": "model", "text": modelText(i, p)})
				turns = append(turns, map[string]any{"role": "observation", "text": obsText(p), "printed_ids": p.res.PrintedIDs, "code": p.res.Code, "stats": p.res.Stats})
				g.response += modelText(i, p) + obsText(p)
			}
			turns = append(turns, map[string]any{"role": "model", "text": final})
			g.response += final
			line = map[string]any{"id": g.id, "question": q.Question, "golden_answers": q.GoldenAnswers, "gold_ids": q.GoldPassageIDs, "turns": turns}
		case u < 0.8:
			for i, p := range g.programs {
				g.response += modelText(i, p) + obsText(p)
			}
			g.response += final
			if u < 0.65 {
				g.format = "flat"
				line = map[string]any{"id": g.id, "question": q.Question, "golden_answers": q.GoldenAnswers, "gold_ids": q.GoldPassageIDs, "prompt": prompt, "response": g.response}
			} else {
				g.format, g.id = "verl", fmt.Sprintf("line-%d", k+1)
				line = map[string]any{"input": prompt, "output": g.response, "gts": map[string]any{"target": q.GoldenAnswers}, "score": 0.0, "step": 3}
			}
		default:
			g.format = "messages"
			msgs := []map[string]any{{"role": "system", "content": "You are a search agent."}, {"role": "user", "content": prompt}}
			for i, p := range g.programs {
				args, _ := json.Marshal(map[string]string{"code": p.src})
				head := fmt.Sprintf("<think>step %d</think>\n", i+1)
				msgs = append(msgs, map[string]any{"role": "assistant", "content": head,
					"tool_calls": []any{map[string]any{"type": "function", "function": map[string]any{"name": "retrieval_program", "arguments": string(args)}}}})
				msgs = append(msgs, map[string]any{"role": "tool", "content": p.res.Observation})
				g.response += head + "<code>\n" + strings.Trim(p.src, "\n") + "\n</code>" + obsText(p)
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": final})
			g.response += final
			line = map[string]any{"id": g.id, "extra_info": map[string]any{"question": q.Question, "gold_ids": q.GoldPassageIDs},
				"reward_model": map[string]any{"ground_truth": map[string]any{"target": q.GoldenAnswers}}, "messages": msgs}
		}
		b, err := json.Marshal(line)
		if err != nil {
			tb.Fatal(err)
		}
		g.line = b
		buf.Write(b)
		buf.WriteByte('\n')
		out = append(out, g)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	return out
}

// rewardInputs are the bodies the test posts to /v1/rewards/{kind} for g,
// built from what the generator knows.
func (g genRollout) rewardInputs() map[string]any {
	q := g.q
	var turns []map[string]any
	for _, p := range g.programs {
		t := map[string]any{"observation": p.res.Observation}
		if g.printed {
			t["printed_ids"], t["retrieval_calls"], t["candidates"], t["printed_tokens"] = p.res.PrintedIDs, p.res.Stats.RetrievalCalls, p.res.Stats.Candidates, p.res.Stats.PrintedTokens
		}
		turns = append(turns, t)
	}
	if turns == nil {
		turns = []map[string]any{}
	}
	return map[string]any{
		"qa":        map[string]any{"id": g.id, "golden_answers": q.GoldenAnswers, "response": g.response},
		"rpl":       map[string]any{"id": g.id, "golden_answers": q.GoldenAnswers, "gold_ids": q.GoldPassageIDs, "gold_titles": q.GoldTitles, "response": g.response, "turns": turns},
		"search-p1": map[string]any{"id": g.id, "qid": g.id, "question": q.Question, "golden_answers": q.GoldenAnswers, "response": g.response},
	}
}

// endpointRewards posts every rollout's inputs to the live reward
// endpoints, 500 at a time, and returns the results by kind.
func endpointRewards(tb testing.TB, base string, gs []genRollout) map[string][]map[string]any {
	tb.Helper()
	out := map[string][]map[string]any{}
	for _, kind := range []string{"qa", "rpl", "search-p1"} {
		for i := 0; i < len(gs); i += 500 {
			var rs []any
			for _, g := range gs[i:min(i+500, len(gs))] {
				rs = append(rs, g.rewardInputs()[kind])
			}
			var resp struct {
				Rewards []map[string]any `json:"rewards"`
			}
			postJSON(tb, base+"/v1/rewards/"+kind, map[string]any{"rollouts": rs}, &resp)
			out[kind] = append(out[kind], resp.Rewards...)
		}
	}
	return out
}

func postJSON(tb testing.TB, url string, body, into any) {
	tb.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		tb.Fatalf("POST %s: %d %v", url, resp.StatusCode, e)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		tb.Fatal(err)
	}
}

func getJSON(tb testing.TB, url string, into any) int {
	tb.Helper()
	resp, err := http.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode
}

// serveUI starts the assembled server (app.New, what `rlsearch serve
// --index IX --inspect DUMP --inspect-gold QUESTIONS` runs) on loopback and
// waits until its dumps are loaded.
func serveUI(tb testing.TB, w *wikiEnv, dumps ...string) *httptest.Server {
	tb.Helper()
	svc, err := app.New(context.Background(), app.Config{Index: app.IndexConfig{Dir: w.ixDir},
		UI: app.UIConfig{Dumps: dumps, Gold: w.questionsPath}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(svc.Handler())
	tb.Cleanup(func() { ts.Close(); svc.Close() })
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var c struct {
			Dumps []struct {
				State, Error string
			} `json:"dumps"`
		}
		getJSON(tb, ts.URL+"/ui/api/config", &c)
		ready := true
		for _, d := range c.Dumps {
			if d.State == "failed" {
				tb.Fatalf("dump failed to load: %s", d.Error)
			}
			ready = ready && d.State == "ready"
		}
		if ready {
			return ts
		}
		if time.Now().After(deadline) {
			tb.Fatal("dumps not loaded after 5 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
