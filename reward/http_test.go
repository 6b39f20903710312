package reward

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

// handlerConfig is the service's configuration plus the body limit of the
// HTTP layer.
type handlerConfig struct {
	ServiceConfig
	MaxBodyBytes int64
}

// newRewardServer mounts the four reward endpoints as cmd/rlsearch serve
// does: through server, unknown top-level keys ignored.
func newRewardServer(t *testing.T, cfg Config, mut func(*handlerConfig)) *httptest.Server {
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hc := handlerConfig{ServiceConfig: ServiceConfig{Scorer: s}, MaxBodyBytes: DefaultMaxBodyBytes}
	if mut != nil {
		mut(&hc)
	}
	svc, err := NewService(hc.ServiceConfig)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for _, k := range Kinds {
		serve := func(ctx context.Context, req Request) (Response, error) { return svc.Serve(ctx, k, req) }
		mux.Handle("/v1/rewards/"+string(k), server.EndpointHandler(server.JSON(serve, server.EndpointOptions{MaxBodyBytes: hc.MaxBodyBytes, IgnoreUnknown: true})))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("status %d, body %q is not JSON", resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

func TestEndpoints(t *testing.T) {
	saved := 0
	srv := newRewardServer(t, Config{}, func(h *handlerConfig) {
		h.MaxBatch = 3
		h.MaxBodyBytes = 4096
		h.AfterBatch = func() error { saved++; return nil }
	})
	code, m := post(t, srv.URL+"/v1/rewards/qa", `{"rollouts": [{"id": "a", "golden_answers": ["2009"], "response": "<answer>In 2009</answer>"}, {"id": "b", "golden_answers": ["x"], "answer": "x"}]}`)
	if code != 200 {
		t.Fatalf("qa: status %d %v", code, m)
	}
	rw := m["rewards"].([]any)
	r0, r1 := rw[0].(map[string]any), rw[1].(map[string]any)
	if r0["id"] != "a" || r0["contains"] != 1.0 || r0["em"] != 0.0 || r1["em"] != 1.0 || m["kind"] != "qa" {
		t.Errorf("qa rewards %v", m)
	}
	code, m = post(t, srv.URL+"/v1/rewards/search-p1", `{"rollouts": [{"id": "a", "question": "q", "golden_answers": ["2009"], "response": "<reasoning>r</reasoning><answer>2009</answer>"}]}`)
	if code != 200 || m["judge"] != "lexical" {
		t.Fatalf("search-p1: status %d %v", code, m)
	}
	p1 := m["rewards"].([]any)[0].(map[string]any)
	for _, k := range []string{"total", "format", "format_parts", "path", "s_self", "s_ref", "r_planner", "outcome", "r_acc", "r_reason", "qa", "correct"} {
		if _, ok := p1[k]; !ok {
			t.Errorf("search-p1 result lacks component %q: %v", k, p1)
		}
	}
	code, m = post(t, srv.URL+"/v1/rewards/rpl", `{"rollouts": [{"id": "a", "golden_answers": ["x"], "gold_ids": ["g"], "turns": [{"printed_ids": ["g"], "retrieval_calls": 1, "candidates": 5}]}]}`)
	if code != 200 || m["rewards"].([]any)[0].(map[string]any)["v_ret"] != 1.0 {
		t.Fatalf("rpl: %d %v", code, m)
	}
	code, m = post(t, srv.URL+"/v1/rewards/proretrieval", `{"rollouts": [{"id": "a", "response": `+mustJSON(goodProgram)+`, "ground_truth": ["g"], "executed": true, "ranked": ["g"]}]}`)
	if code != 200 || m["rewards"].([]any)[0].(map[string]any)["total"] != 1.0 {
		t.Fatalf("proretrieval: %d %v", code, m)
	}
	// An empty response and an answer without response are scored.
	code, m = post(t, srv.URL+"/v1/rewards/qa", `{"rollouts": [{"id": "a", "golden_answers": ["x"], "response": ""}, {"id": "b", "golden_answers": ["x"], "answer": "x"}]}`)
	if code != 200 || m["rewards"].([]any)[0].(map[string]any)["found"] != false || m["rewards"].([]any)[1].(map[string]any)["em"] != 1.0 {
		t.Fatalf("qa with empty response / answer only: %d %v", code, m)
	}
	// Unknown keys that are no near-miss (trainers' extras) still pass.
	code, m = post(t, srv.URL+"/v1/rewards/qa", `{"rollouts": [{"id": "a", "golden_answers": ["x"], "response": "<answer>x</answer>", "data_source": "nq", "extra_info": {"index": 3}}]}`)
	if code != 200 || m["rewards"].([]any)[0].(map[string]any)["em"] != 1.0 {
		t.Fatalf("qa with extra keys: %d %v", code, m)
	}
	if saved != 6 {
		t.Errorf("AfterBatch ran %d times, want 6", saved)
	}

	for _, tc := range []struct {
		name, path, body string
		code             int
		field            string
	}{
		{"malformed", "qa", `{"rollouts": [`, 400, ""},
		{"rollouts not a list", "qa", `{"rollouts": 3}`, 400, "rollouts"},
		{"missing rollouts", "qa", `{}`, 400, "rollouts"},
		{"two values", "qa", `{"rollouts": []} {}`, 400, ""},
		{"too many", "qa", `{"rollouts": [{}, {}, {}, {}]}`, 413, "rollouts"},
		{"too big", "qa", `{"rollouts": [{"response": "` + strings.Repeat("x", 5000) + `"}]}`, 413, ""},
		{"no gold", "qa", `{"rollouts": [{"id": "a", "golden_answers": ["x"], "response": ""}, {"id": "b", "response": "r"}]}`, 400, "rollouts[1].golden_answers"},
		// A missing response (a typo of its key) is refused; "" is a policy that wrote nothing.
		{"qa without response", "qa", `{"rollouts": [{"golden_answers": ["x"], "respnse": "<answer>x</answer>"}]}`, 400, "rollouts[0].response"},
		{"search-p1 without response", "search-p1", `{"rollouts": [{"golden_answers": ["x"], "output": "r"}]}`, 400, "rollouts[0].response"},
		{"proretrieval without response", "proretrieval", `{"rollouts": [{"ground_truth": ["g"], "executed": true}]}`, 400, "rollouts[0].response"},
		{"wrong type", "search-p1", `{"rollouts": [{"golden_answers": "x"}]}`, 400, "rollouts[0].golden_answers"},
		{"rollout not an object", "rpl", `{"rollouts": [3]}`, 400, "rollouts[0]"},
		{"rpl without any gold", "rpl", `{"rollouts": [{"turns": []}]}`, 400, "rollouts[0].golden_answers"},
		{"rpl negative counter", "rpl", `{"rollouts": [{"golden_answers": ["x"], "turns": [{"retrieval_calls": 1}, {"candidates": -1}]}]}`, 400, "rollouts[0].turns[1].candidates"},
		{"turn field type", "rpl", `{"rollouts": [{"gold_ids": ["g"], "turns": [{"candidates": "many"}]}]}`, 400, "rollouts[0].turns.candidates"},
		// Near-misses of a rollout's field names: encoding/json would take
		// "Response" silently and ignore the others, scoring the rollout 0.
		{"near-miss Response", "qa", `{"rollouts": [{"golden_answers": ["x"], "Response": "<answer>x</answer>"}]}`, 400, "rollouts[0].Response"},
		{"near-miss golden-answers", "search-p1", `{"rollouts": [{"golden_answers": ["x"], "response": "r"}, {"golden-answers": ["x"], "response": "r"}]}`, 400, "rollouts[1].golden-answers"},
		{"near-miss gold_IDs", "rpl", `{"rollouts": [{"golden_answers": ["x"], "gold_IDs": ["g"], "turns": []}]}`, 400, "rollouts[0].gold_IDs"},
		{"near-miss GroundTruth", "proretrieval", `{"rollouts": [{"response": "x", "GroundTruth": ["g"], "executed": true}]}`, 400, "rollouts[0].GroundTruth"},
		{"rollout a string", "qa", `{"rollouts": ["x"]}`, 400, "rollouts[0]"},
		{"no ground truth", "proretrieval", `{"rollouts": [{"response": "x", "executed": true}]}`, 400, "rollouts[0].ground_truth"},
		{"no execution, no executor", "proretrieval", `{"rollouts": [{"response": "x", "ground_truth": ["g"]}]}`, 400, "rollouts[0].executed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, m := post(t, srv.URL+"/v1/rewards/"+tc.path, tc.body)
			if code != tc.code || m["field"] != tc.field || m["error"] == "" {
				t.Errorf("status %d body %v, want %d naming field %q", code, m, tc.code, tc.field)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/v1/rewards/qa")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: status %d Allow %q, want 405 POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
