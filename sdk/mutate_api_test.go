package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

func TestMutateHandler(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{})
	v := newVerifier(t, rt, MutateConfig{})
	q := wikiQuestion(t, qWidth5)
	tr := rollout(t, rt, q, bm25Program(q, 3, 3), "x")
	h := server.EndpointHandler(server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	post := func(body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/v1/programs/mutate", strings.NewReader(body)))
		return w
	}
	trJSON, _ := json.Marshal(tr)

	bad := []struct {
		name, body string
		status     int
		field      string
	}{
		{"malformed", `{"trajectories": [`, 400, ""},
		{"unknown field", `{"trajectorys": []}`, 400, "trajectorys"},
		{"empty", `{}`, 400, "trajectories"},
		{"both", `{"trajectories": [` + string(trJSON) + `], "records": [{"trajectory": ` + string(trJSON) + `}]}`, 400, "records"},
		{"budget over 256", `{"trajectories": [` + string(trJSON) + `], "executions": 257}`, 400, "executions"},
		{"bad role", `{"trajectories": [{"turns": [{"role": "critic", "text": "x"}]}]}`, 400, "trajectories[0].turns[0].role"},
		{"bad role of a later turn", `{"trajectories": [` + string(trJSON) + `, {"turns": [{"role": "user", "text": "q"}, {"role": "wizard", "text": "x"}]}]}`, 400, "trajectories[1].turns[1].role"},
		{"bad role in a record", `{"records": [{"trajectory": {"turns": [{"role": "model", "text": "x"}, {"role": "", "text": "y"}]}}]}`, 400, "records[0].trajectory.turns[1].role"},
		{"bad mode", `{"records": [{"trajectory": ` + string(trJSON) + `, "program": {"mode": "hybrid"}}]}`, 400, ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			w := post(tc.body)
			var e struct{ Error, Field string }
			if w.Code != tc.status || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error == "" || e.Field != tc.field {
				t.Errorf("status %d body %s; want %d naming field %q", w.Code, w.Body, tc.status, tc.field)
			}
		})
	}
	t.Run("GET", func(t *testing.T) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/programs/mutate", nil))
		if w.Code != http.StatusMethodNotAllowed {
			t.Errorf("status %d", w.Code)
		}
	})

	t.Run("propose then records", func(t *testing.T) {
		noGold := tr
		noGold.GoldIDs, noGold.GoldPassageIDs = nil, nil
		body, _ := json.Marshal(MutateRequest{Trajectories: []Trajectory{tr, noGold}, MaxVerified: 2})
		w := post(string(body))
		if w.Code != 200 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var resp MutateResponse
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		if len(resp.Proposals) != 2 || resp.Proposals[0].Status != StatusVerified || len(resp.Proposals[0].Verified) != 2 || resp.Proposals[1].Error == "" {
			t.Fatalf("proposals %+v", resp.Proposals)
		}
		want, err := v.Propose(context.Background(), tr, nil)
		if err != nil || resp.Proposals[0].Verified[0].Source != want.Verified[0].Source || resp.Proposals[0].Contexts[0] != want.Contexts[0] {
			t.Fatalf("HTTP proposal differs from Propose (%v)", err)
		}
		p := resp.Proposals[0].Verified[0].Program
		body, _ = json.Marshal(MutateRequest{Records: []RecordRequest{
			{Trajectory: tr, Program: p, Continuation: "<answer>YG Entertainment</answer>"},
			{Trajectory: tr, Program: bm25Program(q, 3, 3), Continuation: "<answer>YG Entertainment</answer>"},
		}})
		w = post(string(body))
		var rr MutateResponse
		if err := json.Unmarshal(w.Body.Bytes(), &rr); err != nil || w.Code != 200 {
			t.Fatalf("%d %v", w.Code, err)
		}
		if len(rr.Records) != 2 || rr.Records[0].Record == nil || !rr.Records[0].Record.Correct || rr.Records[1].Error == "" {
			t.Fatalf("records %+v", rr.Records)
		}
	})
}

// FuzzDecodeMutateRequest: any body either fails to decode with
// ErrBadArgument, or is served without error and without panicking.
func FuzzDecodeMutateRequest(f *testing.F) {
	rt := newRT(f, wikiIndex(f), Config{})
	v := newVerifier(f, rt, MutateConfig{Executions: 4})
	for _, s := range []string{
		`{"trajectories": [{"question": "q", "gold_ids": ["wiki-000001"], "turns": [{"role": "model", "text": "<code>print(sparse(\"who\", k=3))</code>"}]}]}`,
		`{"trajectories": [{"gold_ids": ["a"], "turns": [{"role": "model", "text": "<code>docs = fuse([dense(\"a\", k=5), sparse(\"a\", k=5)])\nprint(docs[:3])</code>"}]}], "executions": 3}`,
		`{"records": [{"trajectory": {"gold_ids": ["a"], "turns": [{"role": "assistant", "text": "<code>print(sparse(\"x y\", k=3))</code>"}]}, "program": {"queries": ["x y"], "mode": "sparse", "width": 5, "rerank": 0, "print": 5}, "continuation": "<answer>a</answer>"}]}`,
		`{"trajectories": [{"turns": [{"role": "model", "text": "<code>print(sparse(\"x\", k=3))"}]}]}`,
		`{"records": [{"program": {"queries": [], "mode": "fuse"}}]}`,
		`{"trajectories": [], "records": []}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, _, err := DecodeMutateRequest(bytes.NewReader(body))
		if err != nil {
			if !errors.Is(err, ErrBadArgument) {
				t.Fatalf("decode error %v does not wrap ErrBadArgument", err)
			}
			return
		}
		if _, err := v.Serve(context.Background(), req); err != nil {
			t.Fatalf("Serve(%s): %v", body, err)
		}
	})
}
