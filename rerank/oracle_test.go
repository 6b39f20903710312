package rerank

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// qwen3TokenizerPath is $RLSEARCH_QWEN3_TOKENIZER, else setup.sh's
// .cache/tokenizers/qwen3.json.
func qwen3TokenizerPath(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv(tokenizer.EnvQwen3Tokenizer)
	if p == "" {
		p = filepath.Join(testutil.RepoRoot(tb), tokenizer.DefaultQwen3Tokenizer)
	}
	if _, err := os.Stat(p); err != nil {
		testutil.RequireNative(tb, "Qwen3 tokenizer "+p)
	}
	return p
}

// oracleEncode runs scripts/tokenizer_oracle.js (Hugging Face tokenizers,
// Rust, through npm @anush008/tokenizers) over texts.
func oracleEncode(tb testing.TB, tokPath string, texts []string) [][]int32 {
	tb.Helper()
	root := testutil.RepoRoot(tb)
	dir := os.Getenv("TOKENIZER_ORACLE_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "oracle")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		testutil.RequireNative(tb, "node (for the tokenizer oracle)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anush008", "tokenizers")); err != nil {
		testutil.RequireNative(tb, "tokenizer oracle "+dir+"/node_modules/@anush008/tokenizers")
	}
	req := struct {
		Tokenizer string   `json:"tokenizer"`
		MaxLen    int      `json:"max_len"`
		Strings   []string `json:"strings"`
	}{Tokenizer: tokPath}
	for _, s := range texts {
		req.Strings = append(req.Strings, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	body, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(root, "scripts", "tokenizer_oracle.js"), "encode")
	cmd.Env = append(os.Environ(), "TOKENIZER_ORACLE_DIR="+dir)
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("tokenizer oracle: %v\n%s", err, stderr.String())
	}
	var resp struct {
		IDs [][]int32 `json:"ids"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("tokenizer oracle reply: %v", err)
	}
	if len(resp.IDs) != len(texts) {
		tb.Fatalf("tokenizer oracle returned %d results for %d strings", len(resp.IDs), len(texts))
	}
	return resp.IDs
}
