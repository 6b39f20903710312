package tokenizer

import (
	"encoding/base64"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// qwen3TokenizerPath is $RLSEARCH_QWEN3_TOKENIZER, else setup.sh's
// .cache/tokenizers/qwen3.json.
func qwen3TokenizerPath(tb testing.TB) string {
	tb.Helper()
	return testutil.NativeFile(tb, EnvQwen3Tokenizer, DefaultQwen3Tokenizer, "Qwen3 tokenizer")
}

var qwen3Tok onceLoad[*BPE]

func loadQwen3(tb testing.TB) *BPE {
	tb.Helper()
	return qwen3Tok.get(tb, qwen3TokenizerPath(tb), LoadBPE)
}

// onceLoad holds a tokenizer loaded once per test binary.
type onceLoad[T any] struct {
	once sync.Once
	tok  T
	err  error
}

// get loads the tokenizer at path with load on the first call and returns
// it, failing tb when loading failed.
func (l *onceLoad[T]) get(tb testing.TB, path string, load func(string) (T, error)) T {
	tb.Helper()
	l.once.Do(func() { l.tok, l.err = load(path) })
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l.tok
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
