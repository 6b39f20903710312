package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdtest"
	"github.com/rlsearch/rlsearch/server"
)

func writeToys(t *testing.T) (schema, data string) { return cmdtest.WriteToys(t) }

func TestHybridCommand(t *testing.T) {
	schema, data := writeToys(t)
	tmp := t.TempDir()
	col := filepath.Join(tmp, "cols", "toys")
	code, out, errs := runCmd(t, "hybrid", "build", "--schema", schema, "--data", data, "--out", col)
	if code != 0 || !strings.Contains(out, "60 rows") || !strings.Contains(out, "title:bm25(60)") {
		t.Fatalf("build: %d %s %s", code, out, errs)
	}
	progs := filepath.Join(tmp, "progs.jsonl")
	os.WriteFile(progs, []byte(`{"sql": "WHERE brand = 'O''Toys' AND product_id IN <text_0>", "retrieval_list": [{"type": "text", "field": "title", "query": "dragon kite"}]}
{"id": "bad", "program": {"sql": "WHERE brand = 'O'Toys'", "retrieval_list": []}}
`), 0o644)
	code, out, errs = runCmd(t, "hybrid", "exec", "--collection", col, "--in", progs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[0], `"ids":["p`) || !strings.Contains(lines[1], `"id":"bad"`) || !strings.Contains(lines[1], "unescaped apostrophe") {
		t.Fatalf("exec: %d\n%s\n%s", code, out, errs)
	}
	// gen and eval are rlsearch-bench's (its TestHybridGenEval).
	if code, _, _ := runCmd(t, "hybrid"); code != 2 {
		t.Fatalf("no subcommand: exit %d, want 2", code)
	}
	if code, _, _ := runCmd(t, "hybrid", "build", "--schema", schema); code != 2 {
		t.Fatalf("missing flags: exit %d, want 2", code)
	}

	// serve --collections DIR mounts POST /v1/hybrid/execute.
	m := map[string]server.Endpoint{}
	exec, err := addHybridEndpoints(m, nil, filepath.Dir(col))
	if err != nil || exec == nil {
		t.Fatalf("addHybridEndpoints: executor %v, error %v", exec, err)
	}
	// The ProRetrieval reward executes programs through the same collections.
	if err := addRewardEndpoints(m, exec); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	server.EndpointHandler(m["/v1/rewards/proretrieval"]).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/rewards/proretrieval",
		strings.NewReader(`{"rollouts": [{"id": "r1", "collection": "toys", "ground_truth": ["p0"],
		  "response": "<answer>{\"sql\": \"WHERE price < 3\", \"retrieval_list\": []}</answer>"}]}`)))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"hit@1":1`) {
		t.Fatalf("proretrieval reward through the collections: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	server.EndpointHandler(m["/v1/hybrid/execute"]).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/hybrid/execute",
		strings.NewReader(`{"collection": "toys", "programs": [{"sql": "WHERE price < 3", "retrieval_list": []}]}`)))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"ids":["p0","p1","p2"]`) {
		t.Fatalf("endpoint: %d %s", rec.Code, rec.Body)
	}
}
