package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// qwen3TestModel generates the tiny random-weight Qwen3 reranker.
func qwen3TestModel(t *testing.T) string {
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
	out, err := exec.Command(testutil.Python, filepath.Join(root, "scripts", "gen_qwen3.py"), "gen", "--variant", "last",
		"--tokenizer", tok, "--out", dir).CombinedOutput()
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
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		done <- run(ctx, []string{"serve", "--index", dir, "--addr", "127.0.0.1:0", "--reranker", model, "--ort-lib", lib, "--rerank-check=false"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	base := strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
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
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited with %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not shut down")
	}
}
