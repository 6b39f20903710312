package answer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pred          string
		golds         []string
		em, contains  bool
		f1            float64
		goldEmptyFlag bool
	}{
		{"SQuAD normalisation", "The  Informant!", []string{"informant"}, true, true, 1, false},
		{"minus sign folds to hyphen", "\u22125", []string{"-5"}, true, true, 1, false},
		{"curly quotes fold", "\u201cParis\u201d", []string{"Paris"}, true, true, 1, false},
		{"NFD equals NFC", "Beyonce\u0301", []string{"Beyoncé"}, true, true, 1, false},
		{"substring is contained, not exact", "in 20091", []string{"2009"}, false, true, 0, false},
		{"partial token overlap", "in 2009", []string{"2009"}, false, true, 2.0 / 3, false},
		{"gold empty after normalize: light tokens", "A", []string{"A"}, true, true, 1, true},
		{"light gold is whole tokens", "banana", []string{"A"}, false, false, 0, true},
		{"blank golds never match", "", []string{"", " ", "\u200b"}, false, false, 0, false},
		{"no golds", "x", nil, false, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := Compare(tc.pred, tc.golds)
			if m.EM != tc.em || m.Contains != tc.contains || m.F1-tc.f1 > 1e-9 || tc.f1-m.F1 > 1e-9 || m.GoldEmpty != tc.goldEmptyFlag {
				t.Errorf("Compare(%q, %q) = %+v; want em %v contains %v f1 %v gold_empty %v", tc.pred, tc.golds, m, tc.em, tc.contains, tc.f1, tc.goldEmptyFlag)
			}
		})
	}
}

// TestCompareEqualsSeparate: Compare (one pass) agrees with ExactMatch,
// Contains, F1 and GoldEmptyAfterNormalize called one by one (the oracle).
func TestCompareEqualsSeparate(t *testing.T) {
	words := []string{"a", "The", "the", "Paris", "paris,", "2009", "−5", "-5", "“x”", "x", "!!!", " ", "", "é", "e\u0301", "an"}
	rng := rand.New(rand.NewPCG(1, 2))
	phrase := func() string {
		n := rng.IntN(4)
		var b []string
		for range n {
			b = append(b, words[rng.IntN(len(words))])
		}
		return strings.Join(b, " ")
	}
	for i := range 5000 {
		pred := phrase()
		golds := make([]string, rng.IntN(3))
		for j := range golds {
			golds[j] = phrase()
		}
		m := Compare(pred, golds)
		want := Match{EM: ExactMatch(pred, golds), Contains: Contains(pred, golds), F1: F1(pred, golds), GoldEmpty: GoldEmptyAfterNormalize(golds)}
		if m != want {
			t.Fatalf("case %d: Compare(%q, %q) = %+v; separate functions give %+v", i, pred, golds, m, want)
		}
		if n := Normalize(pred); Normalize(n) != n {
			t.Fatalf("Normalize not idempotent on %q: %q then %q", pred, n, Normalize(n))
		}
	}
}

// scanF1 is SQuAD's token F1 computed as squad's f1_score does it: walk
// the prediction's tokens, consuming gold tokens from a counter (the
// oracle of overlapF1, and what F1 did before it, in O(|pred|) per gold).
func scanF1(pred, gold []string) float64 {
	if len(pred) == 0 || len(gold) == 0 {
		return 0
	}
	count := map[string]int{}
	for _, t := range gold {
		count[t]++
	}
	same := 0
	for _, t := range pred {
		if count[t] > 0 {
			count[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p := float64(same) / float64(len(pred))
	r := float64(same) / float64(len(gold))
	return 2 * p * r / (p + r)
}

// TestOverlapF1EqualsScan: the multiset F1 against the token-walk oracle
// on seeded random token lists with repeats (both orders of magnitude of
// length), bit for bit.
func TestOverlapF1EqualsScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	toks := func() []string {
		n := rng.IntN(12)
		if rng.IntN(10) == 0 {
			n = rng.IntN(400)
		}
		out := make([]string, n)
		for i := range out {
			out[i] = string(rune('a' + rng.IntN(6)))
		}
		return out
	}
	for i := range 20000 {
		pred, gold := toks(), toks()
		if got, want := overlapF1(countTokens(pred), len(pred), gold), scanF1(pred, gold); got != want {
			t.Fatalf("case %d: overlapF1(%q, %q) = %v, the token walk gives %v", i, pred, gold, got, want)
		}
	}
}

// BenchmarkCompareLongAnswerManyGolds: one 100,000-token answer against
// 1,000 golds (a hostile reward rollout); F1 must not rescan the answer
// per gold.
func BenchmarkCompareLongAnswerManyGolds(b *testing.B) {
	pred := strings.Repeat("x y ", 50000)
	golds := make([]string, 1000)
	for i := range golds {
		golds[i] = "gold answer " + strings.Repeat("z", i%7+1)
	}
	for b.Loop() {
		Compare(pred, golds)
	}
}
