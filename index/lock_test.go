package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCancelledBuildLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, passages(5000, "x")), Dir: filepath.Join(parent, "idx")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Build with a cancelled context: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("cancelled build left %v", ents)
	}
}

func TestHumanBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {14_200_000_000, "14.2 GB"}, {1_500_000, "1.5 MB"}} {
		if got := humanBytes(tc.n); got != tc.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
