package index

import (
	"testing"

	"github.com/rlsearch/rlsearch/ann"
)

// TestSearchBackend: /healthz "backend" follows the dense backend ann.Open
// chose instead of always saying "cpu".
func TestSearchBackend(t *testing.T) {
	for _, tc := range []struct {
		ds   *ann.Opened
		want string
	}{
		{nil, "cpu"},
		{&ann.Opened{Backend: "flat"}, "cpu"},
		{&ann.Opened{Backend: "hnsw"}, "cpu"},
		{&ann.Opened{Backend: "gpu"}, "gpu"},
	} {
		if got := (&Index{DenseSearch: tc.ds}).SearchBackend(); got != tc.want {
			t.Errorf("dense search %+v: backend %q, want %q", tc.ds, got, tc.want)
		}
	}
}
