package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// qwen3TestModel generates the tiny random-weight Qwen3 reranker; extra
// arguments go to gen_qwen3.py gen.
func qwen3TestModel(t *testing.T, extra ...string) string {
	t.Helper()
	root := testutil.RepoRoot(t)
	tok := filepath.Join(root, ".cache", "tokenizers", "qwen3.json")
	if _, err := os.Stat(tok); err != nil {
		testutil.RequireNative(t, "Qwen3 tokenizer "+tok)
	}
	if err := exec.Command(testutil.Python, "-c", "import onnx, numpy").Run(); err != nil {
		testutil.RequireNative(t, "python3-onnx and python3-numpy")
	}
	dir := filepath.Join(t.TempDir(), "qwen3")
	args := append([]string{filepath.Join(root, "scripts", "gen_qwen3.py"), "gen", "--variant", "last", "--tokenizer", tok, "--out", dir}, extra...)
	out, err := exec.Command(testutil.Python, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("gen_qwen3.py: %v\n%s", err, out)
	}
	return dir
}

func TestRerankCommandAndEndpoint(t *testing.T) {
	model := qwen3TestModel(t)
	lib := testutil.ORTLib(t)
	docs := filepath.Join(t.TempDir(), "docs.jsonl")
	os.WriteFile(docs, []byte(corpusText), 0o644)
	code, out, errs := runCmd(t, "rerank", "--reranker", model, "--ort-lib", lib, "--rerank-check=false", "--query", "capital of Germany", "--docs", docs)
	if code != 0 {
		t.Fatalf("rerank: code %d\n%s\n%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"id":"p1"`) || !strings.Contains(lines[2], `"id":"p3"`) {
		t.Fatalf("rerank output (want p1, p2, p3 in input order):\n%s", out)
	}
	if code, _, errs := runCmd(t, "rerank", "--query", "q"); code != 2 || !strings.Contains(errs, "--reranker is required") {
		t.Errorf("missing --reranker: code %d, %s", code, errs)
	}

	dir, _ := buildIndex(t)
	base, stop := startServe(t, "--index", dir, "--addr", "127.0.0.1:0", "--reranker", model, "--ort-lib", lib, "--rerank-check=false")
	resp, err := http.Post(base+"/rerank", "application/json", strings.NewReader(
		`{"queries": ["capital of Germany", "none"], "documents": [[{"id": "a", "contents": "x"}, {"id": "a", "contents": "x"}, {"id": "b", "contents": "y"}], []], "return_scores": true}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result [][]struct {
			Document struct{ ID string }
			Score    float64
		}
	}
	json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(got.Result) != 2 || len(got.Result[0]) != 2 || len(got.Result[1]) != 0 {
		t.Fatalf("/rerank: status %d, %+v", resp.StatusCode, got)
	}
	// Programs on the same server rerank with --reranker (not "unavailable").
	resp, err = http.Post(base+"/v1/programs/execute", "application/json", strings.NewReader(
		`{"programs": [{"id": "p", "code": "docs = sparse('capital city', k=3)\nprint(rerank('capital city', docs, k=2))"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"code":"ok"`) || strings.Contains(string(body), "unavailable") {
		t.Fatalf("/v1/programs/execute with rerank: %d %s", resp.StatusCode, body)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
}

// TestRerankCommandNonFinite: with a model that scores NaN for the pairs
// whose document holds " poison", `rlsearch rerank` fails (exit 1) naming
// the query, the document's line, position and id, and prints no scores.
func TestRerankCommandNonFinite(t *testing.T) {
	root := testutil.RepoRoot(t)
	bpe, err := tokenizer.LoadBPE(filepath.Join(root, ".cache", "tokenizers", "qwen3.json"))
	if err != nil {
		testutil.RequireNative(t, "Qwen3 tokenizer: "+err.Error())
	}
	ids := bpe.Encode(" poison")
	if len(ids) != 1 {
		t.Fatalf("\" poison\" is %d tokens, want 1", len(ids))
	}
	model := qwen3TestModel(t, "--nan-token", fmt.Sprint(ids[0]))
	lib := testutil.ORTLib(t)
	docs := filepath.Join(t.TempDir(), "docs.jsonl")
	os.WriteFile(docs, []byte(`{"id": "ok1", "contents": "\"A\"\nalpha"}

{"id": "bad", "title": "B", "text": "a poison pill"}
{"id": "ok2", "contents": "\"C\"\ngamma"}
`), 0o644)
	code, out, errs := runCmd(t, "rerank", "--reranker", model, "--ort-lib", lib, "--rerank-check=false", "--query", "which pill", "--docs", docs)
	if code != 1 || out != "" {
		t.Fatalf("rerank with a NaN pair: code %d, stdout %q; want 1 and nothing printed\n%s", code, out, errs)
	}
	for _, m := range []string{"line 3", `query "which pill"`, `document 1 (id "bad")`, "NaN"} {
		if !strings.Contains(errs, m) {
			t.Errorf("stderr %q does not mention %s", errs, m)
		}
	}
}

// TestServeNonFiniteRerank: behind serve, the same NaN model fails
// rerank() in a program (an error naming the query and document, not NaN
// scores in the output) and POST /rerank (500 naming both).
func TestServeNonFiniteRerank(t *testing.T) {
	root := testutil.RepoRoot(t)
	bpe, err := tokenizer.LoadBPE(filepath.Join(root, ".cache", "tokenizers", "qwen3.json"))
	if err != nil {
		testutil.RequireNative(t, "Qwen3 tokenizer: "+err.Error())
	}
	model := qwen3TestModel(t, "--nan-token", fmt.Sprint(bpe.Encode(" poison")[0]))
	lib := testutil.ORTLib(t)
	dir, _ := buildIndex(t)
	base, stop := startServe(t, "--index", dir, "--addr", "127.0.0.1:0", "--reranker", model, "--ort-lib", lib, "--rerank-check=false")
	post := func(path, body string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("/rerank", `{"queries": ["capital"], "documents": [[{"id": "a", "contents": "x"}, {"id": "p", "contents": "a poison"}]], "return_scores": false}`)
	if code != 500 || !strings.Contains(body, `documents[0][1] (id \"p\")`) || !strings.Contains(body, `queries[0] \"capital\"`) {
		t.Errorf("/rerank with a NaN pair: %d %s; want 500 naming queries[0] and documents[0][1]", code, body)
	}
	code, body = post("/v1/programs/execute", `{"programs": [{"id": "p", "code": "docs = sparse('capital city', k=3)\nprint(rerank('poison', docs, k=2))"}]}`)
	if code != 200 || !strings.Contains(body, `"code":"internal_error"`) || !strings.Contains(body, `scored NaN for query \"poison\", document 0 (id \"`) {
		t.Errorf("rerank() with a NaN model: %d %s; want the program's internal_error naming the query and document", code, body)
	}
	stop()
}
