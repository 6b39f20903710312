package rerank

import "testing"

func crossModel(tb testing.TB, labels int) string {
	tb.Helper()
	tb.Skip("cross-encoder generator not written yet")
	return ""
}
