package index

import "testing"

func TestMetaSummary(t *testing.T) {
	m := &Meta{NumDocs: 4, Skipped: 1, BuildSeconds: 2, BM25: BM25Meta{NumTerms: 9}}
	want := "indexed 4 passages (1 empty skipped) into d in 2.0s (2 passages/s); BM25 9 terms"
	if got := m.Summary("d"); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	m.Dense = &DenseMeta{Model: "e5", Dim: 3, DType: "fp16"}
	if got := m.Summary("d"); got[:len(want)] != want || got[len(want):] != "; dense e5 3-d fp16" {
		t.Errorf("Summary with a vector file = %q", got)
	}
}
