package reward

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"The Beaver and Erie Canal", "beaver and erie canal"},
		{"  A  cat,  an apple; THE end. ", "cat apple end"},
		{"theater", "theater"},          // article only as a whole word
		{"an-apple", "anapple"},         // punctuation removed first (as SQuAD)
		{"Émile's café", "émiles café"}, // non-ASCII kept, lower-cased
		{"a", ""},                       // only an article
		{"«the» x", "x"},                // « » fold to '"' (UnicodeFold), which is removed
		{"¿the? x", "¿ x"},              // other non-ASCII punctuation is kept, \b still holds
		{"the_a the", "thea"},           // "_" is punctuation, removed before articles
		{"tab\tand\nnewline", "tab and newline"},
		{"", ""},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// qaCase is one row of the answer-metric tables: EM, contains and F1 of
// pred against golds, and whether ScoreQA flags the row
// gold_empty_after_normalize (checked by TestUnicodeAnswers only;
// TestQAMetrics leaves it false).
type qaCase struct {
	name     string
	pred     string
	golds    []string
	em, cont bool
	f1       float64
	flagged  bool
}

// checkMetrics checks ExactMatch, Contains and F1 against tc's row.
func (tc qaCase) checkMetrics(t *testing.T) {
	t.Helper()
	if got := ExactMatch(tc.pred, tc.golds); got != tc.em {
		t.Errorf("ExactMatch = %v, want %v", got, tc.em)
	}
	if got := Contains(tc.pred, tc.golds); got != tc.cont {
		t.Errorf("Contains = %v, want %v", got, tc.cont)
	}
	if got := F1(tc.pred, tc.golds); !near(got, tc.f1) {
		t.Errorf("F1 = %v, want %v", got, tc.f1)
	}
}

func TestQAMetrics(t *testing.T) {
	for _, tc := range []qaCase{
		{"exact after normalisation", "the Informant!", []string{"Informant"}, true, true, 1, false},
		{"contained", "In 2009.", []string{"2009"}, false, true, 2 * 0.5 * 1 / 1.5, false},
		// pred tokens [steven soderbergh directed it] gold [steven soderbergh]: P=2/4 R=1 F1=2/3
		{"partial", "Steven Soderbergh directed it", []string{"Steven Soderbergh"}, false, true, 2.0 / 3, false},
		// best of two golds: [paris] vs [paris france]: P=1 R=1/2 F1=2/3; vs [paris]: 1
		{"best gold", "Paris", []string{"Paris, France", "paris"}, true, true, 1, false},
		{"repeated tokens count once each", "new new york", []string{"new york"}, false, true, 2 * (2.0 / 3) * 1 / (2.0/3 + 1), false},
		{"wrong", "1999", []string{"2009"}, false, false, 0, false},
		{"substring, as Search-R1", "20091", []string{"2009"}, false, true, 0, false},
		{"blank gold ignored, article-only gold by light tokens", "anything", []string{"", " ", "the"}, false, false, 0, false},
		{"no golds", "x", nil, false, false, 0, false},
		{"empty prediction", "", []string{"x"}, false, false, 0, false},
	} {
		t.Run(tc.name, tc.checkMetrics)
	}
}

func TestExtractAnswer(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"<answer> 2009 </answer>", "2009", true},
		{"<answer>draft</answer> more <answer>final\nline</answer>", "final\nline", true},
		{"<answer>unclosed", "", false},
		{"no tags", "", false},
		{"<answer></answer>", "", true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := ExtractAnswer(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Errorf("ExtractAnswer(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestScoreQAMissingAnswer(t *testing.T) {
	s := ScoreQA("2009", false, []string{"2009"})
	if s.EM != 0 || s.F1 != 0 || s.Contains != 0 {
		t.Errorf("ScoreQA with found=false = %+v, want zeros (no answer, no credit)", s)
	}
}
