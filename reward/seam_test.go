package reward_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
)

// post sends body to h and returns the response body; it fails the test
// on a status other than 200.
func post(t *testing.T, h http.Handler, body []byte) []byte {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, out)
	}
	return out
}

// TestExecuteResultIsAnRPLTurn pipes the body of a real
// POST /v1/programs/execute response, unchanged, into POST
// /v1/rewards/rpl as the rollout's turns: the reward must read the
// program's printed ids and its stats (retrieval_calls, candidates,
// printed_tokens) as the runtime reported them.
func TestExecuteResultIsAnRPLTurn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	lines := ""
	for _, d := range []struct{ id, contents string }{
		{"d1", `"The Informant!"` + "\nThe Informant! is a 2009 film directed by Steven Soderbergh."},
		{"d2", `"Mark Whitacre"` + "\nMark Whitacre is an American business executive."},
		{"d3", `"Robin Hood (2018 film)"` + "\nRobin Hood is a 2018 film directed by Otto Bathurst."},
		{"d4", `"Steven Soderbergh"` + "\nSteven Soderbergh is an American film director."},
		{"d5", `"Otto Bathurst"` + "\nOtto Bathurst is a British film director."},
	} {
		b, _ := json.Marshal(map[string]string{"id": d.id, "contents": d.contents})
		lines += string(b) + "\n"
	}
	if err := os.WriteFile(corpus, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ixDir := filepath.Join(dir, "ix")
	if _, err := index.Build(ctx, index.BuildConfig{Corpus: corpus, Dir: ixDir}); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(ctx, ixDir, index.OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rt, err := sdk.New(sdk.Config{Retrievers: ix.Retrievers(), Docs: ix})
	if err != nil {
		t.Fatal(err)
	}

	// Two programs (two turns): two sparse calls fused, then one call.
	execBody := post(t, server.EndpointHandler(server.JSON(rt.Serve, server.EndpointOptions{MaxBodyBytes: rt.MaxBodyBytes()})), []byte(`{"programs": [
		{"id": "t1", "question": "who directed the informant", "code": "print(fuse(sparse(question, k=3), sparse('Mark Whitacre', k=3))[:2])"},
		{"id": "t2", "question": "Steven Soderbergh", "code": "print(sparse(question, k=1))"}]}`))
	var exec struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(execBody, &exec); err != nil {
		t.Fatalf("execute body %s: %v", execBody, err)
	}
	var stats []struct {
		PrintedIDs []string `json:"printed_ids"`
		Stats      struct {
			RetrievalCalls int `json:"retrieval_calls"`
			Calls          int `json:"calls"`
			Candidates     int `json:"candidates"`
			PrintedTokens  int `json:"printed_tokens"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(execBody[bytes.IndexByte(execBody, '['):bytes.LastIndexByte(execBody, ']')+1], &stats); err != nil {
		t.Fatalf("execute results %s: %v", execBody, err)
	}
	if len(stats) != 2 || stats[0].Stats.RetrievalCalls != 2 || stats[1].Stats.RetrievalCalls != 1 {
		t.Fatalf("execute results %s: want 2 results with retrieval_calls 2 and 1", execBody)
	}
	wantCalls, wantCands, wantTokens := 0, 0, 0
	for _, s := range stats {
		if s.Stats.Calls != s.Stats.RetrievalCalls {
			t.Errorf("deprecated stats.calls %d differs from retrieval_calls %d", s.Stats.Calls, s.Stats.RetrievalCalls)
		}
		wantCalls += s.Stats.RetrievalCalls
		wantCands += s.Stats.Candidates
		wantTokens += s.Stats.PrintedTokens
	}

	// The results go into the reward unchanged, as the rollout's turns.
	rollout := map[string]any{"id": "r", "golden_answers": []string{"Steven Soderbergh"},
		"gold_ids": []string{"d1", "d4"}, "response": "<answer>Steven Soderbergh</answer>",
		"turns": exec.Results}
	body, err := json.Marshal(map[string]any{"rollouts": []any{rollout}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := reward.New(reward.Config{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := reward.NewService(reward.ServiceConfig{Scorer: s})
	if err != nil {
		t.Fatal(err)
	}
	rpl := func(ctx context.Context, req reward.Request) (reward.Response, error) {
		return svc.Serve(ctx, "rpl", req)
	}
	out := post(t, server.EndpointHandler(server.JSON(rpl, server.EndpointOptions{MaxBodyBytes: reward.DefaultMaxBodyBytes})), body)
	var got struct {
		Rewards []reward.RPLResult `json:"rewards"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.Rewards) != 1 {
		t.Fatalf("reward body %s: %v", out, err)
	}
	r := got.Rewards[0]
	if r.Turns != 2 || r.RetrievalCalls != wantCalls || r.Candidates != wantCands || r.PrintedTokens != wantTokens {
		t.Errorf("reward read turns %d retrieval_calls %d candidates %d printed_tokens %d; the execute stats say 2, %d, %d, %d (%s)",
			r.Turns, r.RetrievalCalls, r.Candidates, r.PrintedTokens, wantCalls, wantCands, wantTokens, execBody)
	}
	if r.VRet != 1 || r.MatchedBy != "ids" || r.QA.EM != 1 {
		t.Errorf("v_ret %d matched_by %q em %v; want 1, ids, 1 (printed %v, %v)", r.VRet, r.MatchedBy, r.QA.EM, stats[0].PrintedIDs, stats[1].PrintedIDs)
	}
}

// TestRPLTurnStatsPrecedence: top-level counts win over "stats"; the
// deprecated "calls" is read when "retrieval_calls" is absent.
func TestRPLTurnStatsPrecedence(t *testing.T) {
	for _, tc := range []struct {
		name, turn         string
		calls, cands, toks int
	}{
		{"flat", `{"retrieval_calls": 3, "candidates": 9, "printed_tokens": 4}`, 3, 9, 4},
		{"stats", `{"stats": {"retrieval_calls": 2, "calls": 2, "candidates": 7, "printed_tokens": 5}}`, 2, 7, 5},
		{"deprecated calls only", `{"stats": {"calls": 4, "candidates": 1}}`, 4, 1, -1},
		{"top level wins", `{"retrieval_calls": 1, "printed_tokens": 8, "stats": {"retrieval_calls": 6, "candidates": 2, "printed_tokens": 5}}`, 1, 2, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var turn reward.RPLTurn
			if err := json.Unmarshal([]byte(tc.turn), &turn); err != nil {
				t.Fatal(err)
			}
			toks := -1
			if turn.PrintedTokens != nil {
				toks = *turn.PrintedTokens
			}
			if turn.RetrievalCalls != tc.calls || turn.Candidates != tc.cands || toks != tc.toks {
				t.Errorf("%s → calls %d candidates %d printed_tokens %d; want %d %d %d", tc.turn, turn.RetrievalCalls, turn.Candidates, toks, tc.calls, tc.cands, tc.toks)
			}
		})
	}
}
