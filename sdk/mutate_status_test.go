package sdk

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

// TestMutateEveryItemHasStatus (issue 25, item 4): a trajectory without
// gold used to come back inside the 200 with an error and an empty
// status. Every item now has a status from Statuses, and the summary
// counts them.
func TestMutateEveryItemHasStatus(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	v := newVerifier(t, rt, MutateConfig{})
	q := wikiQuestion(t, qWidth5)
	tr := rollout(t, rt, q, bm25Program(q, 3, 3), "x")
	noGold := tr
	noGold.ID, noGold.GoldIDs, noGold.GoldPassageIDs = "no-gold", nil, nil
	answerOnly := tr
	answerOnly.ID, answerOnly.Turns = "answer-only", []Turn{{RoleModel, "<answer>x</answer>"}}
	h := server.EndpointHandler(server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	body, _ := json.Marshal(MutateRequest{Trajectories: []Trajectory{tr, noGold, answerOnly}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/programs/mutate", strings.NewReader(string(body))))
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var resp MutateResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	want := []Status{StatusVerified, StatusSkippedNoGold, StatusNotMutable}
	for i, p := range resp.Proposals {
		if p.Status != want[i] {
			t.Errorf("proposal %d (%s): status %q, want %q (error %q)", i, p.ID, p.Status, want[i], p.Error)
		}
	}
	if p := resp.Proposals[1]; !strings.Contains(p.Error, "no gold support ids") {
		t.Errorf("no-gold item: error %q, want it to say why it was skipped", p.Error)
	}
	wantSum := MutateSummary{Rollouts: 3, Verified: 1, NotMutable: 1, SkippedNoGold: 1}
	if resp.Summary != wantSum {
		t.Errorf("summary %+v, want %+v", resp.Summary, wantSum)
	}
	if !strings.Contains(w.Body.String(), `"summary":{"rollouts":3,"verified":1,"no_verified_mutation":0,"not_mutable":1,"skipped_no_gold":1,"error":0,"records":0,"record_errors":0}`) {
		t.Errorf("summary JSON: %s", w.Body)
	}

	// A search that fails (here: the context ended) is StatusError, never "".
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i, p := range v.ProposeBatch(ctx, []Trajectory{tr, noGold}, 1, nil) {
		if want := []Status{StatusError, StatusSkippedNoGold}[i]; p.Status != want || p.Error == "" || !slices.Contains(Statuses, p.Status) {
			t.Errorf("cancelled %s: status %q error %q, want %q with the error", p.ID, p.Status, p.Error, want)
		}
	}
}
