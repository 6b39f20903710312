package hybrid_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/reward"
)

// The executor plugs into the ProRetrieval hierarchical reward.
var _ reward.HybridExecutor = (*hybrid.Executor)(nil)

func TestExecutorForReward(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(testutil.DataDir(t), "enron_emails", "emails.jsonl")
	s, _ := hybrid.BuiltinSchema("enron_emails")
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := hybrid.Build(ctx, hybrid.BuildConfig{Schema: s, Data: data, Dir: dir, Limit: 300}); err != nil {
		t.Fatal(err)
	}
	c, err := hybrid.Open(ctx, dir, hybrid.OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ex := hybrid.NewExecutor(map[string]*hybrid.Collection{"enron_emails": c})
	ids, err := ex.Execute(ctx, "enron_emails", json.RawMessage(`{"sql":"WHERE year >= 1999 OR message_id IN <text_0>","retrieval_list":[{"type":"text","field":"body","query":"gas prices"}]}`))
	if err != nil || len(ids) == 0 {
		t.Fatalf("Execute: %v %v", ids, err)
	}
	for _, bad := range []struct{ col, prog string }{
		{"nope", `{"sql":"WHERE year = 2001","retrieval_list":[]}`},
		{"enron_emails", `{"sql":"WHERE year = 2001; DROP TABLE rows","retrieval_list":[]}`},
		{"enron_emails", `"WHERE year = 2001"`},
		{"enron_emails", `{"sql":"WHERE year = 2001","extra":1}`},
	} {
		if _, err := ex.Execute(ctx, bad.col, json.RawMessage(bad.prog)); !errors.Is(err, rlsearch.ErrBadInput) {
			t.Fatalf("Execute(%s, %s) = %v, want ErrBadInput", bad.col, bad.prog, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ex.Execute(cctx, "enron_emails", json.RawMessage(`{"sql":"WHERE year = 2001","retrieval_list":[]}`)); err != context.Canceled {
		t.Fatalf("cancelled ctx: %v", err)
	}
}

// TestRewardOnGeneratedInstances: the ProRetrieval hierarchical reward,
// executing through this package, pays the gold program of generated
// instances in full on the result layer and a one-leaf-negated program
// less; its ranking metrics agree with hybrid.Score.
func TestRewardOnGeneratedInstances(t *testing.T) {
	ctx := context.Background()
	data := filepath.Join(testutil.DataDir(t), "enron_emails", "emails.jsonl")
	s, _ := hybrid.BuiltinSchema("enron_emails")
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := hybrid.Build(ctx, hybrid.BuildConfig{Schema: s, Data: data, Dir: dir, Limit: 1000}); err != nil {
		t.Fatal(err)
	}
	c, err := hybrid.Open(ctx, dir, hybrid.OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	insts, _, err := hybrid.Generate(ctx, c, hybrid.GenConfig{N: 15, Seed: 21})
	if err != nil || len(insts) < 10 {
		t.Fatalf("generate: %d instances, %v", len(insts), err)
	}
	sc, err := reward.NewProRetrieval(reward.ProRetrievalConfig{Executor: hybrid.NewExecutor(map[string]*hybrid.Collection{"enron_emails": c}), Metric: reward.MetricHit1})
	if err != nil {
		t.Fatal(err)
	}
	var gold, mut float64
	for _, in := range insts {
		{
			p := in.Program
			raw, _ := json.Marshal(p)
			r, err := sc.Score(ctx, reward.ProRetrievalRollout{ID: in.ID, Collection: "enron_emails", Response: "<answer>" + string(raw) + "</answer>", GroundTruth: in.Truth})
			if err != nil || r.Format != 1 || r.Exec != 1 {
				t.Fatalf("%s: %+v %v", p.SQL, r, err)
			}
			gold += r.Result
		}
		mp, err := hybrid.NegateLeaf(s, in.Program, 0)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(mp)
		r, err := sc.Score(ctx, reward.ProRetrievalRollout{ID: in.ID, Collection: "enron_emails", Response: "<answer>" + string(raw) + "</answer>", GroundTruth: in.Truth})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Execute(ctx, mp)
		if err != nil {
			t.Fatal(err)
		}
		mine := hybrid.Score(in.Truth, res.IDs, true)
		if r.Metrics.Hit1 != mine.Hit1 || r.Metrics.MRR != mine.RR || r.Metrics.Hit3 != mine.Hit3 {
			t.Fatalf("reward metrics %+v differ from hybrid.Score %+v", r.Metrics, mine)
		}
		mut += r.Result
	}
	if gold != float64(len(insts)) || mut >= gold {
		t.Fatalf("result layer: gold %.2f of %d, mutated %.2f", gold, len(insts), mut)
	}
}
