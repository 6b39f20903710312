package rlsearch_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// widthFake answers query q at width k with k hits whose rows depend on k
// (as an approximate backend's may): a cut of a wider list is not the
// narrower list. It records the widths of its calls.
type widthFake struct {
	mu     sync.Mutex
	calls  [][]int // widths per call (one entry per query)
	stable bool
	widths bool // implements RetrieveWidths (through widthFakeW)
}

func (f *widthFake) Name() string { return "fake" }

func (f *widthFake) PrefixStable() bool { return f.stable }

func (f *widthFake) list(q string, k int) []rlsearch.Hit {
	out := make([]rlsearch.Hit, k)
	for i := range out {
		row := int32(len(q)*100 + i)
		if !f.stable {
			row += int32(k * 10000) // depends on k
		}
		out[i] = rlsearch.Hit{Row: row, Score: float32(1000 - i)}
	}
	return out
}

func (f *widthFake) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	ks := make([]int, len(qs))
	out := make([][]rlsearch.Hit, len(qs))
	for i, q := range qs {
		ks[i], out[i] = k, f.list(q, k)
	}
	f.mu.Lock()
	f.calls = append(f.calls, ks)
	f.mu.Unlock()
	return out, nil
}

type widthFakeW struct{ *widthFake }

func (f widthFakeW) RetrieveWidths(_ context.Context, qs []string, ks []int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for i, q := range qs {
		out[i] = f.list(q, ks[i])
	}
	f.mu.Lock()
	f.calls = append(f.calls, ks)
	f.mu.Unlock()
	return out, nil
}

// TestRetrieveWidths: every list equals a Retrieve of that query alone at
// its width, through each of the three ways (RetrieveWidths, one call cut
// for a prefix-stable retriever, one call per width otherwise), with the
// number of underlying calls each way makes.
func TestRetrieveWidths(t *testing.T) {
	qs := []string{"a", "bb", "ccc", "dddd"}
	ks := []int{3, 10, 3, 1}
	for _, tc := range []struct {
		name  string
		f     *widthFake
		calls int
	}{
		{"widths", &widthFake{widths: true}, 1},
		{"stable", &widthFake{stable: true}, 1},
		{"other", &widthFake{}, 3},
	} {
		var r rlsearch.Retriever = tc.f
		if tc.f.widths {
			r = widthFakeW{tc.f}
		}
		got, err := rlsearch.RetrieveWidths(context.Background(), r, qs, ks)
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range qs {
			if want := tc.f.list(q, ks[i]); !reflect.DeepEqual(got[i], want) {
				t.Errorf("%s: %q at k=%d: %v, want %v (the query alone)", tc.name, q, ks[i], got[i], want)
			}
		}
		if len(tc.f.calls) != tc.calls {
			t.Errorf("%s: %d underlying calls %v, want %d", tc.name, len(tc.f.calls), tc.f.calls, tc.calls)
		}
	}
	if _, err := rlsearch.RetrieveWidths(context.Background(), &widthFake{}, qs, ks[:2]); err == nil {
		t.Error("2 widths for 4 queries: no error")
	}
	if rlsearch.PrefixStable(&widthFake{}) || !rlsearch.PrefixStable(&widthFake{stable: true}) {
		t.Error("PrefixStable does not report the retriever's own answer")
	}
}
