package answer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestNumericSign (issue 25, item 5): SQuAD normalisation drops the minus
// sign, so gold "-5" matched answer "5" (Search-R1 does the same: the
// default, kept for parity); SignStrict keeps the sign and compares the
// value.
func TestNumericSign(t *testing.T) {
	strict := Options{NumericSign: SignStrict}
	for _, tc := range []struct {
		name                  string
		pred                  string
		golds                 []string
		squadEM, strictEM     bool
		squadCont, strictCont bool
		squadF1, strictF1     float64
	}{
		{"issue: -5 against 5", "5", []string{"-5"}, true, false, true, false, 1, 0},
		{"5 against -5", "-5", []string{"5"}, true, false, true, false, 1, 0},
		{"U+2212 minus equals hyphen-minus", "\u22125", []string{"-5"}, true, true, true, true, 1, 1},
		{"-5.0 equals -5 by value", "-5.0", []string{"-5"}, false, true, true, true, 0, 1},
		{"5.50 equals 5.5", "5.50", []string{"5.5"}, false, true, true, true, 0, 1},
		{"5.5 is not 55", "5.5", []string{"55"}, true, false, true, false, 1, 0},
		{"plus sign is the number", "+5", []string{"5"}, true, true, true, true, 1, 1},
		{"negative zero is zero", "-0.0", []string{"0"}, false, true, true, true, 0, 1},
		{"thousands commas as SQuAD", "-1,000", []string{"-1000"}, true, true, true, true, 1, 1},
		{"a sign inside a sentence", "it was -5 degrees", []string{"-5"}, false, false, true, true, 0.4, 0.4},
		{"positive in a sentence is not the negative gold", "it was 5 degrees", []string{"-5"}, false, false, true, false, 0.4, 0},
		{"strict contains is whole tokens: 2009 in 20091", "in 20091", []string{"2009"}, false, false, true, false, 0, 0},
		{"a hyphen between numbers is punctuation", "1990-2000", []string{"19902000"}, true, true, true, true, 1, 1},
		{"a hyphen inside a word is punctuation", "covid-19", []string{"covid19"}, true, true, true, true, 1, 1},
		{"words are unchanged", "The  Informant!", []string{"informant"}, true, true, true, true, 1, 1},
		{"007 keeps its digits", "007", []string{"7"}, false, false, true, false, 0, 0},
		{"no sign after a word, once punctuation is gone", "“x”-5", []string{"x5"}, true, true, true, true, 1, 1},
		{"a bracketed negative", "(-5)", []string{"-5"}, true, true, true, true, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sq, st := Compare(tc.pred, tc.golds), CompareWith(tc.pred, tc.golds, strict)
			near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
			if sq.EM != tc.squadEM || sq.Contains != tc.squadCont || !near(sq.F1, tc.squadF1) {
				t.Errorf("squad: %+v; want em %v contains %v f1 %v", sq, tc.squadEM, tc.squadCont, tc.squadF1)
			}
			if st.EM != tc.strictEM || st.Contains != tc.strictCont || !near(st.F1, tc.strictF1) {
				t.Errorf("strict: %+v; want em %v contains %v f1 %v (forms %q, %q)", st, tc.strictEM, tc.strictCont, tc.strictF1,
					NormalizeWith(tc.pred, strict), NormalizeWith(tc.golds[0], strict))
			}
		})
	}
}

// TestStrictEqualsSQuADWithoutNumberPunctuation: the strict form differs
// from SQuAD's only around numbers: on text with no sign, point or comma
// next to a digit the two are equal; and it is idempotent (seeded random
// phrases; the oracle is Normalize).
func TestStrictEqualsSQuADWithoutNumberPunctuation(t *testing.T) {
	words := []string{"a", "The", "Paris,", "2009", "−5", "-5", "5.0", "1,000", "“x”", "x-ray", "!!!", " ", "é", "e\u0301", "an", "+3", "(-2)", "0.50", "-0", "b2.5", "3.14.15", "- 4", "$-7"}
	rng := rand.New(rand.NewPCG(25, 5))
	strict := Options{NumericSign: SignStrict}
	for range 3000 {
		var b []string
		for range rng.IntN(6) {
			b = append(b, words[rng.IntN(len(words))])
		}
		s := strings.Join(b, []string{" ", "", "-", "."}[rng.IntN(4)])
		got := NormalizeWith(s, strict)
		if again := NormalizeWith(got, strict); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if !hasNumberPunct(s) && got != Normalize(s) {
			t.Fatalf("%q: strict %q, SQuAD %q, with no number punctuation", s, got, Normalize(s))
		}
	}
}

// hasNumberPunct reports whether a '-', '+', '.' or ',' (after
// UnicodeFold) touches an ASCII digit.
func hasNumberPunct(s string) bool {
	rs := []rune(UnicodeFold(s))
	for i, r := range rs {
		if !strings.ContainsRune("-+.,", r) {
			continue
		}
		if i > 0 && isDigit(rs[i-1]) || i+1 < len(rs) && isDigit(rs[i+1]) {
			return true
		}
	}
	return false
}

// FuzzNormalizeStrict: no panic, idempotent, equal to Normalize away from
// number punctuation (corpus in testdata/fuzz/FuzzNormalizeStrict).
func FuzzNormalizeStrict(f *testing.F) {
	for _, s := range []string{"-5", "\u22125.0", "1,000.50", "covid-19", "(-0)", "+", "-", "5.", ".5", "a-5", "\xff-5"} {
		f.Add(s)
	}
	strict := Options{NumericSign: SignStrict}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeWith(s, strict)
		if again := NormalizeWith(got, strict); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if !hasNumberPunct(s) && got != Normalize(s) {
			t.Fatalf("%q: strict %q, SQuAD %q, with no number punctuation", s, got, Normalize(s))
		}
	})
}
