package reward

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

type wikiQuestion struct {
	ID             string   `json:"id"`
	Question       string   `json:"question"`
	GoldenAnswers  []string `json:"golden_answers"`
	Dataset        string   `json:"dataset"`
	GoldPassageIDs []string `json:"gold_passage_ids"`
	GoldTitles     []string `json:"gold_titles"`
}

// wikiRollout is a one-search rollout built from real BM25 retrieval.
type wikiRollout struct {
	q       wikiQuestion
	top     []string // printed document ids (top 3)
	obs     string   // the observation: the top-3 passages as Search-R1 prints them
	goldHit bool     // a gold passage is among them
}

var wiki struct {
	once     sync.Once
	rollouts []wikiRollout
	err      error
	build    time.Duration
}

// wikiRollouts builds a BM25 index of wiki_multihop once per test binary
// (into a temporary directory) and retrieves the top 3 passages (Search-P1,
// App. B.4) for the first n questions with answers.
func wikiRollouts(tb testing.TB, n int) []wikiRollout {
	tb.Helper()
	data := filepath.Join(testutil.DataDir(tb), "wiki_multihop")
	wiki.once.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "reward-wiki-*")
		if err != nil {
			wiki.err = err
			return
		}
		defer os.RemoveAll(dir)
		start := time.Now()
		ixDir := filepath.Join(dir, "ix")
		if _, err := index.Build(ctx, index.BuildConfig{Corpus: filepath.Join(data, "corpus.jsonl"), Dir: ixDir}); err != nil {
			wiki.err = err
			return
		}
		ix, err := index.Open(ctx, ixDir, index.OpenConfig{})
		if err != nil {
			wiki.err = err
			return
		}
		defer ix.Close()
		wiki.build = time.Since(start)
		f, err := os.Open(filepath.Join(data, "questions.jsonl"))
		if err != nil {
			wiki.err = err
			return
		}
		defer f.Close()
		var qs []wikiQuestion
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() && len(qs) < 200 {
			var q wikiQuestion
			if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
				wiki.err = err
				return
			}
			if len(q.GoldenAnswers) > 0 {
				qs = append(qs, q)
			}
		}
		texts := make([]string, len(qs))
		for i, q := range qs {
			texts[i] = q.Question
		}
		hits, err := ix.Retrievers()["bm25"].Retrieve(ctx, texts, 3)
		if err != nil {
			wiki.err = err
			return
		}
		for i, q := range qs {
			r := wikiRollout{q: q}
			var obs strings.Builder
			for k, h := range hits[i] {
				d, err := ix.Doc(h.Row)
				if err != nil {
					wiki.err = err
					return
				}
				r.top = append(r.top, d.ID)
				fmt.Fprintf(&obs, "Doc %d(Title: %s) %s\n", k+1, d.TitleLine(), d.Text())
				for _, g := range q.GoldPassageIDs {
					r.goldHit = r.goldHit || g == d.ID
				}
			}
			r.obs = obs.String()
			wiki.rollouts = append(wiki.rollouts, r)
		}
	})
	if wiki.err != nil {
		tb.Fatal(wiki.err)
	}
	return wiki.rollouts[:min(n, len(wiki.rollouts))]
}

// response is the one-search Search-P1 trajectory answering ans.
func (r *wikiRollout) response(ans string) string {
	call, _ := json.Marshal(map[string]any{"name": "search", "arguments": map[string]string{"query": r.q.Question}})
	return "<reasoning>1. Search for " + r.q.Question + "</reasoning>\n<tool_call>" + string(call) +
		"</tool_call>\n<tool_response>" + r.obs + "</tool_response>\n<reasoning>The passages answer it.</reasoning>\n<answer>" + ans + "</answer>"
}

// TestWikiMultihopRewards scores one-search rollouts built from real BM25
// retrieval on wiki_multihop with the gold answer and with a wrong answer
// (another question's gold). Correct answers get R_outcome 1; wrong ones
// get the soft outcome, which is higher when the retrieved passages hold
// the gold answer than when they do not. RPL's V_ret of the same printed
// top 3 equals "every gold passage retrieved".
func TestWikiMultihopRewards(t *testing.T) {
	rs := wikiRollouts(t, 200)
	t.Logf("BM25 index of wiki_multihop built and opened in %v; %d rollouts", wiki.build.Round(time.Millisecond), len(rs))
	s, err := NewSearchP1(SearchP1Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var nGood, nWrong, nWrongHit, nWrongMiss int
	var sumGood, sumWrong, sumWrongHit, sumWrongMiss, sumTotGood, sumTotWrong float64
	for i := range rs {
		r := &rs[i]
		wrong := rs[(i+1)%len(rs)].q.GoldenAnswers[0]
		if Contains(wrong, r.q.GoldenAnswers) {
			continue
		}
		good, err := s.Score(ctx, SearchP1Rollout{ID: r.q.ID, Question: r.q.Question, GoldenAnswers: r.q.GoldenAnswers, Response: r.response(r.q.GoldenAnswers[0])})
		if err != nil || good.Error != "" {
			t.Fatal(err, good.Error)
		}
		bad, _ := s.Score(ctx, SearchP1Rollout{ID: r.q.ID, Question: r.q.Question, GoldenAnswers: r.q.GoldenAnswers, Response: r.response(wrong)})
		if good.Outcome != 1 || !good.Correct {
			t.Fatalf("%s: gold answer %q scored outcome %v", r.q.ID, r.q.GoldenAnswers[0], good.Outcome)
		}
		if bad.Correct || bad.Outcome >= 1 {
			t.Fatalf("%s: wrong answer %q scored correct %v outcome %v", r.q.ID, wrong, bad.Correct, bad.Outcome)
		}
		if good.Format != 1 || good.SSelf != bad.SSelf || good.Format != bad.Format {
			t.Fatalf("%s: format/path should not depend on the answer: %+v vs %+v", r.q.ID, good, bad)
		}
		nGood++
		nWrong++
		sumGood += good.Outcome
		sumWrong += bad.Outcome
		sumTotGood += good.Total
		sumTotWrong += bad.Total
		if bad.RReason == 1 {
			nWrongHit++
			sumWrongHit += bad.Outcome
		} else {
			nWrongMiss++
			sumWrongMiss += bad.Outcome
		}
	}
	t.Logf("R_outcome mean: gold answer %.3f, wrong answer %.3f (evidence holds the gold answer: %.3f over %d; not: %.3f over %d); R_total mean %.3f vs %.3f",
		sumGood/float64(nGood), sumWrong/float64(nWrong), sumWrongHit/float64(max(nWrongHit, 1)), nWrongHit,
		sumWrongMiss/float64(max(nWrongMiss, 1)), nWrongMiss, sumTotGood/float64(nGood), sumTotWrong/float64(nWrong))
	if nWrongHit == 0 || nWrongMiss == 0 {
		t.Fatalf("degenerate split: %d wrong rollouts with the gold in evidence, %d without", nWrongHit, nWrongMiss)
	}
	if !(sumWrongHit/float64(nWrongHit) > sumWrongMiss/float64(nWrongMiss)) {
		t.Errorf("soft outcome does not reward finding the answer's evidence")
	}
	if !(sumTotGood/float64(nGood) > sumTotWrong/float64(nWrong)+0.3) {
		t.Errorf("R_total does not separate gold from wrong answers")
	}

	// RPL on the same printed evidence.
	var vret, allGold int
	for _, r := range rs {
		res := ScoreRPL(RPLConfig{}, RPLRollout{ID: r.q.ID, GoldenAnswers: r.q.GoldenAnswers, GoldPassageIDs: r.q.GoldPassageIDs,
			Answer: &r.q.GoldenAnswers[0], Turns: []RPLTurn{{PrintedIDs: r.top, Observation: r.obs, RetrievalCalls: 1, Candidates: 3}}})
		all := true
		for _, g := range r.q.GoldPassageIDs {
			found := false
			for _, id := range r.top {
				found = found || id == g
			}
			all = all && found
		}
		if (res.VRet == 1) != all || res.QA.EM != 1 {
			t.Fatalf("%s: v_ret %d, every gold in top 3 %v, em %v", r.q.ID, res.VRet, all, res.QA.EM)
		}
		vret += res.VRet
		if all {
			allGold++
		}
	}
	t.Logf("RPL V_ret = 1 for %d of %d one-search rollouts (BM25 top 3 holds every gold passage)", vret, len(rs))
}

// BenchmarkScoreSearchP1 measures Search-P1 rollouts scored per second
// with the lexical judge, on one-search wiki_multihop rollouts (three real
// passages each), through Scorer.ScoreBatch in batches of 256.
func BenchmarkScoreSearchP1(b *testing.B) {
	rs := wikiRollouts(b, 200)
	var batch []json.RawMessage
	for i := 0; len(batch) < 256; i++ {
		r := rs[i%len(rs)]
		ans := r.q.GoldenAnswers[0]
		if i%2 == 1 {
			ans = rs[(i+1)%len(rs)].q.GoldenAnswers[0]
		}
		raw, _ := json.Marshal(SearchP1Rollout{ID: r.q.ID, Question: r.q.Question, GoldenAnswers: r.q.GoldenAnswers, Response: r.response(ans),
			ReferencePlan: []string{"Search for " + r.q.Question, "Find the answer entity"}})
		batch = append(batch, raw)
	}
	for _, kind := range []Kind{KindSearchP1, KindQA} {
		b.Run(string(kind), func(b *testing.B) {
			s, _ := New(Config{})
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.ScoreBatch(ctx, kind, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rollouts/s")
		})
	}
}
