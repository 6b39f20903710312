package rerank

import (
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/tokenizer"
)

// qwen3TokenizerPath is $RLSEARCH_QWEN3_TOKENIZER, else setup.sh's
// .cache/tokenizers/qwen3.json.
func qwen3TokenizerPath(tb testing.TB) string {
	tb.Helper()
	return testutil.NativeFile(tb, tokenizer.EnvQwen3Tokenizer, tokenizer.DefaultQwen3Tokenizer, "Qwen3 tokenizer")
}
