package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/reward"
)

// wikiGold returns each wiki_multihop question with its gold passage ids.
func wikiGold(tb testing.TB) (qs []string, gold [][]string) {
	for _, q := range testutil.WikiQuestions(tb) {
		qs, gold = append(qs, q.Question), append(gold, q.GoldPassageIDs)
	}
	return qs, gold
}

// rewardRollouts is n retrieval rollouts over the questions: the policy's
// query is the question itself (one in three in DeepRetrieval's JSON
// answer, one in three with a word dropped), gold the question's passages.
func rewardRollouts(qs []string, gold [][]string, n, k int) (string, []string) {
	var b strings.Builder
	b.WriteString(`{"rollouts": [`)
	queries := make([]string, n)
	for i := 0; i < n; i++ {
		j := i % len(qs)
		q := qs[j]
		if i%3 == 2 {
			w := strings.Fields(q)
			q = strings.Join(w[1:], " ")
		}
		queries[i] = q
		var resp string
		if i%3 == 1 {
			a, _ := json.Marshal(map[string]string{"query": q})
			resp = "<think>rewrite</think><answer>" + string(a) + "</answer>"
		} else {
			resp = "<answer>" + q + "</answer>"
		}
		r, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "response": resp, "gold_ids": gold[j], "k": k, "metric": "recall"})
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(r)
	}
	b.WriteString("]}")
	return b.String(), queries
}

// TestRetrievalRewardWiki scores 4,096 rollouts in one POST
// /v1/rewards/retrieval on the wiki_multihop BM25 index and checks every
// rollout's recall@10, NDCG@10, hit and MRR against the same metrics
// computed here from /retrieve's own answer for the same query (the
// reward must search what the policy is served).
func TestRetrievalRewardWiki(t *testing.T) {
	dir, _ := wikiIndex(t)
	qs, gold := wikiGold(t)
	svc, err := New(context.Background(), Config{Index: IndexConfig{Dir: dir}, Logger: slog.New(slog.DiscardHandler), CacheBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	const n, k = 4096, 10
	body, queries := rewardRollouts(qs, gold, n, k)
	start := time.Now()
	raw := post(t, svc.Handler(), "/v1/rewards/retrieval", body)
	took := time.Since(start)
	var resp struct {
		Kind    string                   `json:"kind"`
		Rewards []reward.RetrievalResult `json:"rewards"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Kind != "retrieval" || len(resp.Rewards) != n {
		t.Fatalf("kind %q, %d rewards; want retrieval, %d", resp.Kind, len(resp.Rewards), n)
	}
	// The oracle: /retrieve's ids for each distinct query.
	uniq := slices.Compact(slices.Sorted(slices.Values(queries)))
	rb, _ := json.Marshal(map[string]any{"queries": uniq, "topk": k})
	var served struct {
		Result [][]struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	if err := json.Unmarshal(post(t, svc.Handler(), "/retrieve", string(rb)), &served); err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for i, q := range uniq {
		for _, d := range served.Result[i] {
			ids[q] = append(ids[q], d.ID)
		}
	}
	sum := 0.0
	for i, r := range resp.Rewards {
		g := gold[i%len(qs)]
		rel := map[string]float64{}
		for _, id := range g {
			rel[id] = 1
		}
		want := reward.ScoreRetrieval(ids[queries[i]], rel, k)
		if r.ID != fmt.Sprint(i) || !slices.Equal(r.Retrieved, ids[queries[i]]) || r.RetrievalScores != want || r.Reward != want.Recall || !r.Found {
			t.Fatalf("rollout %d (%q): %+v; /retrieve gives %v → %+v", i, queries[i], r, ids[queries[i]], want)
		}
		sum += r.Reward
	}
	mean := sum / n
	t.Logf("4,096 rollouts in one call: %v; mean recall@10 %.3f (BM25, the question as the query)", took, mean)
	if mean < 0.5 || math.IsNaN(mean) {
		t.Errorf("mean recall@10 %.3f: BM25 on the questions themselves finds most gold passages (any@10 0.988), want ≥ 0.5", mean)
	}
}

// BenchmarkRetrievalReward times one POST /v1/rewards/retrieval of 4,096
// rollouts (BM25, k = 10, recall) on the wiki_multihop index, in process,
// with the result cache off and warm.
func BenchmarkRetrievalReward(b *testing.B) {
	dir, _ := wikiIndex(b)
	qs, gold := wikiGold(b)
	body, _ := rewardRollouts(qs, gold, 4096, 10)
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"cache=off", 0}, {"cache=warm", 64 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			svc, err := New(context.Background(), Config{Index: IndexConfig{Dir: dir}, Logger: slog.New(slog.DiscardHandler), CacheBytes: c.bytes})
			if err != nil {
				b.Fatal(err)
			}
			defer svc.Close()
			post(b, svc.Handler(), "/v1/rewards/retrieval", body)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				post(b, svc.Handler(), "/v1/rewards/retrieval", body)
			}
			b.ReportMetric(4096*float64(b.N)/b.Elapsed().Seconds(), "rollouts/s")
		})
	}
}
