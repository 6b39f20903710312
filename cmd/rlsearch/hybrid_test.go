package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

const hybridSchema = `{"name": "toys", "id": "product_id", "columns": [
  {"name": "brand", "type": "TEXT", "role": "categorical"},
  {"name": "price", "type": "REAL", "role": "numeric"}],
 "text": [{"name": "title"}]}`

func writeToys(t *testing.T) (schema, data string) {
	t.Helper()
	tmp := t.TempDir()
	schema, data = filepath.Join(tmp, "schema.json"), filepath.Join(tmp, "toys.jsonl")
	os.WriteFile(schema, []byte(hybridSchema), 0o644)
	words := []string{"wooden", "train", "puzzle", "doll", "robot", "castle", "racing", "car", "dragon", "kite"}
	var b bytes.Buffer
	for i := range 60 {
		fmt.Fprintf(&b, `{"id": "p%d", "brand": "%s", "price": %d.5, "title": "%s %s %s"}`+"\n", i,
			[]string{"Acme", "Brio", "Lego", "O'Toys"}[i%4], i, words[i%10], words[(i/3)%10], words[(i*7)%10])
	}
	os.WriteFile(data, b.Bytes(), 0o644)
	return schema, data
}

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
	inst := filepath.Join(tmp, "inst.jsonl")
	code, out, errs = runCmd(t, "hybrid", "gen", "--collection", col, "--n", "10", "--seed", "4", "--verbalize", "template", "--out", inst)
	raw, _ := os.ReadFile(inst)
	if code != 0 || strings.Count(string(raw), "\n") == 0 || !strings.Contains(string(raw), `"query":"toys where`) || !strings.Contains(errs, "generated") {
		t.Fatalf("gen: %d %s %s\n%s", code, out, errs, raw)
	}
	code, out, errs = runCmd(t, "hybrid", "eval", "--collection", col, "--instances", inst)
	var rep struct {
		All map[string]float64 `json:"all"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.All["hit@1"] != 1 || rep.All["exec_success"] != 1 {
		t.Fatalf("eval of gold programs: %d %s %s", code, out, errs)
	}
	// Predictions: one unparsable, the others missing -> execution failures.
	var first struct{ ID string }
	json.Unmarshal([]byte(strings.SplitN(string(raw), "\n", 2)[0]), &first)
	pred := filepath.Join(tmp, "pred.jsonl")
	os.WriteFile(pred, []byte(`{"id": "`+first.ID+`", "program": {"sql": "WHERE brand = 'x' UNION SELECT 1", "retrieval_list": []}}`+"\n"), 0o644)
	code, out, _ = runCmd(t, "hybrid", "eval", "--collection", col, "--instances", inst, "--predictions", pred)
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.All["exec_success"] != 0 {
		t.Fatalf("eval of predictions: %d %s", code, out)
	}
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
