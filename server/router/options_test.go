package router

import (
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestRetriesConvention: Config.Retries 0 is DefaultRetries, rlsearch.Off
// (any negative value) no retries, any other value itself (the options
// convention, rlsearch.Off).
func TestRetriesConvention(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{0, DefaultRetries},
		{rlsearch.Off, 0},
		{-7, 0},
		{1, 1},
		{5, 5},
	} {
		if got := (Config{Retries: tc.in}).withDefaults().Retries; got != tc.want {
			t.Errorf("Retries %d: %d attempts after a failure, want %d", tc.in, got, tc.want)
		}
	}
}
