package bench

import (
	"errors"

	"github.com/rlsearch/rlsearch"
)

// ErrNoGold: no question of a set has gold passage ids.
var ErrNoGold = errors.New("bench: no question has gold_passage_ids: nothing to evaluate")

// GoldCoverage counts the distinct gold passage ids of qs (total) and how
// many of them scan never yields (missing): gold passages absent from an
// index count as not retrieved, so a large missing count means the wrong
// question set or index. scan is a docstore's Scan (one pass over every
// document). Errors: ErrNoGold, scan's error.
func GoldCoverage(qs []Question, scan func(fn func(row int32, d rlsearch.Document) error) error) (missing, total int, err error) {
	want := map[string]bool{}
	for _, q := range qs {
		for _, id := range q.GoldIDs {
			want[id] = false
		}
	}
	if len(want) == 0 {
		return 0, 0, ErrNoGold
	}
	if err := scan(func(_ int32, d rlsearch.Document) error {
		if _, ok := want[d.ID]; ok {
			want[d.ID] = true
		}
		return nil
	}); err != nil {
		return 0, 0, err
	}
	for _, found := range want {
		if !found {
			missing++
		}
	}
	return missing, len(want), nil
}
