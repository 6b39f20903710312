package sdk

import (
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestMaxHeapBytesConvention: Config.MaxHeapBytes 0 is
// DefaultMaxHeapBytes (2 GiB) and rlsearch.Off (any negative value) turns
// the heap guard off (the options convention, rlsearch.Off; the guard runs
// only for a positive bound, pyrun.go).
func TestMaxHeapBytesConvention(t *testing.T) {
	for _, tc := range []struct {
		in      int64
		want    int64
		guarded bool
	}{
		{0, DefaultMaxHeapBytes, true},
		{rlsearch.Off, rlsearch.Off, false},
		{-5, -5, false},
		{1 << 20, 1 << 20, true},
	} {
		got := (Config{MaxHeapBytes: tc.in}).withDefaults().MaxHeapBytes
		if got != tc.want || (got > 0) != tc.guarded {
			t.Errorf("MaxHeapBytes %d: %d after defaults (guard %v), want %d (guard %v)", tc.in, got, got > 0, tc.want, tc.guarded)
		}
	}
	if DefaultMaxHeapBytes != 2<<30 {
		t.Errorf("DefaultMaxHeapBytes = %d, want the documented 2 GiB", DefaultMaxHeapBytes)
	}
}
