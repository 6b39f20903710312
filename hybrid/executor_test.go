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
