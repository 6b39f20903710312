package rerank

import (
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestMain removes the generated models after the package's tests.
func TestMain(m *testing.M) { testutil.Main(m) }

// genModel generates a model with scripts/<script> once per test binary.
func genModel(tb testing.TB, script string, args ...string) string {
	tb.Helper()
	return testutil.GenModel(tb, "model", script, args...)
}

// qwen3Model generates the tiny Qwen3 model of a variant ("full" or "last").
func qwen3Model(tb testing.TB, variant string) string {
	tb.Helper()
	tok := qwen3TokenizerPath(tb)
	return genModel(tb, "gen_qwen3.py", "--variant", variant, "--seed", "1", "--tokenizer", tok)
}
