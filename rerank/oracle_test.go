package rerank

import (
	"os"
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
