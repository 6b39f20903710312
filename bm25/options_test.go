package bm25

import (
	"testing"

	"github.com/rlsearch/rlsearch"
)

// litConfig is a Config scoring with exactly k1 and b, 0 included: a zero
// parameter is asked for with rlsearch.Off (0 means the default).
func litConfig(k1, b float64) Config {
	lit := func(v float64) float64 {
		if v == 0 {
			return rlsearch.Off
		}
		return v
	}
	return Config{K1: lit(k1), B: lit(b)}
}

// TestParamsConvention: 0 is the default (Pyserini's k1 0.9, b 0.4),
// rlsearch.Off (any negative value) the literal 0, any other value itself
// (the options convention, rlsearch.Off).
func TestParamsConvention(t *testing.T) {
	tests := []struct {
		name          string
		cfg           Config
		wantK1, wantB float32
	}{
		{"zero: defaults", Config{}, DefaultK1, DefaultB},
		{"Off: literal zeros", Config{K1: rlsearch.Off, B: rlsearch.Off}, 0, 0},
		{"other negatives: literal zeros", Config{K1: -3, B: -0.5}, 0, 0},
		{"set values", Config{K1: 1.2, B: 0.75}, 1.2, 0.75},
		{"b off only", Config{B: rlsearch.Off}, DefaultK1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k1, b := tc.cfg.params()
			if k1 != tc.wantK1 || b != tc.wantB {
				t.Errorf("params() = k1 %v, b %v; want %v, %v", k1, b, tc.wantK1, tc.wantB)
			}
		})
	}
	// Off scores as the literal parameters do: b = 0 ignores the
	// document's length, so two documents with one match each score the
	// same however long they are.
	ix := buildAndOpen(t, Config{B: rlsearch.Off}, []string{"zebra", "zebra and many more words in a long passage"})
	hits := ix.Search("zebra", 2)
	if len(hits) != 2 || hits[0].Score != hits[1].Score {
		t.Errorf("b = Off: hits %v, want two equal scores (no length normalisation)", hits)
	}
}
