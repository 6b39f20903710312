package testutil

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// OracleCmd returns the command running scripts/tokenizer_oracle.js
// (Hugging Face tokenizers, Rust, through npm @anush008/tokenizers) with
// args, skipping tb (or failing it, RequireNative) without node or the
// oracle package. $TOKENIZER_ORACLE_DIR overrides .cache/oracle.
func OracleCmd(tb testing.TB, args ...string) *exec.Cmd {
	tb.Helper()
	root := RepoRoot(tb)
	dir := os.Getenv("TOKENIZER_ORACLE_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "oracle")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		RequireNative(tb, "node (for the tokenizer oracle)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anush008", "tokenizers")); err != nil {
		RequireNative(tb, "tokenizer oracle "+dir+"/node_modules/@anush008/tokenizers")
	}
	cmd := exec.Command(node, append([]string{filepath.Join(root, "scripts", "tokenizer_oracle.js")}, args...)...)
	cmd.Env = append(os.Environ(), "TOKENIZER_ORACLE_DIR="+dir)
	return cmd
}

// OracleEncode returns Hugging Face tokenizers' ids for each text with the
// tokenizer.json at tokPath, truncated to maxLen (0 = no truncation).
func OracleEncode(tb testing.TB, tokPath string, texts []string, maxLen int) [][]int32 {
	tb.Helper()
	req := struct {
		Tokenizer string   `json:"tokenizer"`
		MaxLen    int      `json:"max_len"`
		Strings   []string `json:"strings"`
	}{Tokenizer: tokPath, MaxLen: maxLen}
	for _, s := range texts {
		req.Strings = append(req.Strings, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	var resp struct {
		IDs [][]int32 `json:"ids"`
	}
	OracleEncodeJSON(tb, req, &resp)
	if len(resp.IDs) != len(texts) {
		tb.Fatalf("tokenizer oracle returned %d results for %d strings", len(resp.IDs), len(texts))
	}
	return resp.IDs
}

// OracleEncodeJSON sends req as JSON to the oracle's "encode" command
// (OracleCmd) and decodes its JSON reply into resp, failing tb with the
// oracle's stderr when it fails.
func OracleEncodeJSON(tb testing.TB, req, resp any) {
	tb.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := OracleCmd(tb, "encode")
	cmd.Stdin = bytes.NewReader(body)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("tokenizer oracle: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, resp); err != nil {
		tb.Fatalf("tokenizer oracle reply: %v", err)
	}
}
