package tokenizer

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// qwen3TokenizerPath is $RLSEARCH_QWEN3_TOKENIZER, else setup.sh's
// .cache/tokenizers/qwen3.json.
func qwen3TokenizerPath(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv(EnvQwen3Tokenizer)
	if p == "" {
		p = filepath.Join(testutil.RepoRoot(tb), DefaultQwen3Tokenizer)
	}
	if _, err := os.Stat(p); err != nil {
		testutil.RequireNative(tb, "Qwen3 tokenizer "+p)
	}
	return p
}

var (
	qwenOnce sync.Once
	qwenTok  *BPE
	qwenErr  error
)

func loadQwen3(tb testing.TB) *BPE {
	tb.Helper()
	p := qwen3TokenizerPath(tb)
	qwenOnce.Do(func() { qwenTok, qwenErr = LoadBPE(p) })
	if qwenErr != nil {
		tb.Fatal(qwenErr)
	}
	return qwenTok
}

// oraclePretokenize returns Hugging Face's pre-tokenizer pieces of texts
// (scripts/tokenizer_oracle.js, testutil.OracleCmd).
func oraclePretokenize(tb testing.TB, tokPath string, texts []string) [][]string {
	tb.Helper()
	req := map[string]any{"tokenizer": tokPath, "pretokenize": true}
	var ss []string
	for _, s := range texts {
		ss = append(ss, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	req["strings"] = ss
	var resp struct {
		Pieces [][]string `json:"pieces"`
	}
	testutil.OracleEncodeJSON(tb, req, &resp)
	if len(resp.Pieces) != len(texts) {
		tb.Fatalf("oracle returned %d results for %d strings", len(resp.Pieces), len(texts))
	}
	return resp.Pieces
}
