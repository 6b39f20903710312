package sdk

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/recovered"
	"github.com/rlsearch/rlsearch/server"
)

// TestMutateGoldBound: a mutate with 200,000 gold ids is refused with 413
// naming the field within 1 s (it took ~80 s when distinct() was
// quadratic); MaxGoldIDs gold ids are answered, and their repeats cost
// linear time.
func TestMutateGoldBound(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	v := newVerifier(t, rt, MutateConfig{})
	q := wikiQuestion(t, qWidth5)
	tr := rollout(t, rt, q, bm25Program(q, 3, 3), "x")
	h := server.EndpointHandler(server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	post := func(tr Trajectory) (*httptest.ResponseRecorder, time.Duration) {
		body, _ := json.Marshal(MutateRequest{Trajectories: []Trajectory{tr}, Executions: 4})
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/programs/mutate", strings.NewReader(string(body))))
		return w, time.Since(start)
	}

	big := tr
	big.GoldIDs = make([]string, 200_000)
	for i := range big.GoldIDs {
		big.GoldIDs[i] = fmt.Sprintf("wiki-%d", i)
	}
	w, took := post(big)
	var e struct{ Error, Field string }
	if w.Code != http.StatusRequestEntityTooLarge || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Field != "trajectories[0].gold_ids" || !strings.Contains(e.Error, "MaxGoldIDs") {
		t.Fatalf("200,000 gold ids: status %d body %.300s; want 413 naming trajectories[0].gold_ids", w.Code, w.Body)
	}
	if took > time.Second && !raceOn {
		t.Errorf("200,000 gold ids refused in %v, want ≤ 1 s", took)
	}
	t.Logf("200,000 gold ids: %d in %v", w.Code, took)

	full := tr
	full.GoldIDs = append([]string{}, tr.GoldIDs...)
	for len(full.GoldIDs)+len(full.GoldPassageIDs) < MaxGoldIDs {
		full.GoldIDs = append(full.GoldIDs, fmt.Sprintf("absent-%d", len(full.GoldIDs)))
	}
	w, took = post(full)
	if w.Code != http.StatusOK {
		t.Fatalf("%d gold ids: status %d body %.300s", MaxGoldIDs, w.Code, w.Body)
	}
	t.Logf("%d gold ids: %d in %v", MaxGoldIDs, w.Code, took)
}

// TestDistinctLinear: distinct and covered keep first-seen order and
// count each gold id once, in linear time.
func TestDistinctLinear(t *testing.T) {
	if got := distinct([]string{"b", "", "a", "b", "a", "c"}); strings.Join(got, ",") != "b,a,c" {
		t.Fatalf("distinct = %q", got)
	}
	if n := covered([]string{"a", "x", "a"}, []string{"a", "a", "b", ""}); n != 1 {
		t.Fatalf("covered = %d, want 1", n)
	}
	xs := make([]string, 200_000)
	for i := range xs {
		xs[i] = fmt.Sprint(i % 100_000)
	}
	start := time.Now()
	if n := covered(xs, xs); n != 100_000 {
		t.Fatalf("covered = %d", n)
	}
	if d := time.Since(start); d > time.Second && !raceOn {
		t.Errorf("covered of 200,000 ids took %v", d)
	}
}

// TestMutateRecoversPanic: a panic in a mutate worker becomes the
// request's 500 (kind panic), counted in
// rlsearch_recovered_panics_total{where="mutate"}; the next request is
// served.
func TestMutateRecoversPanic(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	v := newVerifier(t, rt, MutateConfig{})
	q := wikiQuestion(t, qWidth5)
	tr := rollout(t, rt, q, bm25Program(q, 3, 3), "x")
	h := server.EndpointHandler(server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	body, _ := json.Marshal(MutateRequest{Trajectories: []Trajectory{tr, tr}, Executions: 4})
	post := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/programs/mutate", strings.NewReader(string(body))))
		return w
	}
	recovered.SetHook(func(where string) {
		if where == "mutate" {
			panic("injected")
		}
	})
	defer recovered.SetHook(nil)
	before := recovered.Count("mutate")
	if w := post(); w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), "recovered panic") {
		t.Fatalf("status %d body %.300s, want 500 naming the recovered panic", w.Code, w.Body)
	}
	if d := recovered.Count("mutate") - before; d != 2 {
		t.Errorf("counter +%d, want +2", d)
	}
	recovered.SetHook(nil)
	if w := post(); w.Code != http.StatusOK {
		t.Fatalf("after the panic: status %d body %.300s", w.Code, w.Body)
	}
}
