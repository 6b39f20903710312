package reward

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/internal/answer"
	"golang.org/x/text/unicode/norm"
)

// TestUnicodeAnswers: issue 13's reward inputs and more of their kinds.
// Every row gives EM, contains and F1 of pred against golds, and whether
// the result is flagged gold_empty_after_normalize.
// blank is answer.Blank: a gold empty after folding never matches.
var blank = answer.Blank

func TestUnicodeAnswers(t *testing.T) {
	for _, tc := range []qaCase{
		// Issue inputs.
		{"minus sign U+2212 vs hyphen-minus", "-5", []string{"\u22125"}, true, true, 1, false},
		{"curly double quotes", "Paris", []string{"\u201cParis\u201d"}, true, true, 1, false},
		{"NFD vs NFC", "Beyonce\u0301", []string{"Beyoncé"}, true, true, 1, false},
		{"gold normalises to empty: A", "A", []string{"A"}, true, true, 1, true},
		// Same kinds, found here.
		{"en dash in a range", "1939-1945", []string{"1939\u20131945"}, true, true, 1, false},
		{"em dash and figure dash", "Jean\u2014Paul", []string{"Jean\u2012Paul"}, true, true, 1, false},
		{"curly apostrophe", "Don't Stop Believin'", []string{"Don\u2019t Stop Believin\u2019"}, true, true, 1, false},
		{"guillemets and low-9 quotes", "\u201eFaust\u201c", []string{"\u00abFaust\u00bb"}, true, true, 1, false},
		{"fullwidth digits and minus (NFKC)", "\uff0d\uff15", []string{"-5"}, true, true, 1, false},
		{"superscript minus (NFKC then fold)", "10\u207b3", []string{"10-3"}, true, true, 1, false},
		{"ligature fi (NFKC)", "\ufb01nal answer", []string{"final answer"}, true, true, 1, false},
		{"no-break space", "New\u00a0York", []string{"New York"}, true, true, 1, false},
		{"soft hyphen and zero-width space", "Ein\u00adstein\u200b", []string{"Einstein"}, true, true, 1, false},
		{"ellipsis (NFKC)", "Wait\u2026", []string{"Wait..."}, true, true, 1, false},
		{"Angstrom sign vs A-ring", "\u212bngstr\u00f6m", []string{"\u00c5ngstr\u00f6m"}, true, true, 1, false},
		// Golds that normalise to "": matched by LightTokens, flagged.
		{"article-only gold, wrong answer", "B", []string{"A"}, false, false, 0, true},
		{"article-only gold, answer with trailing period", "A.", []string{"A"}, true, true, 1, true},
		{"article-only gold is not a substring match", "banana", []string{"A"}, false, false, 0, true},
		{"article-only gold contained as a token", "Option A", []string{"A"}, false, true, 2.0 / 3, true},
		{"The The", "the the", []string{"The The"}, true, true, 1, true},
		{"punctuation-only gold", "!!!", []string{"!!!"}, true, true, 1, true},
		{"one flagged gold among ordinary ones", "Paris", []string{"A", "Paris"}, true, true, 1, true},
		{"blank golds are not flagged", "x", []string{"", " ", "\u200b"}, false, false, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ScoreQA(tc.pred, true, tc.golds)
			if s.EM != b2f(tc.em) || s.Contains != b2f(tc.cont) || !near(s.F1, tc.f1) || s.GoldEmptyAfterNormalize != tc.flagged {
				t.Errorf("ScoreQA(%+q, %+q) = EM %v contains %v F1 %v flagged %v; want %v %v %v %v",
					tc.pred, tc.golds, s.EM, s.Contains, s.F1, s.GoldEmptyAfterNormalize, b2f(tc.em), b2f(tc.cont), tc.f1, tc.flagged)
			}
			tc.checkMetrics(t) // must agree with ScoreQA
		})
	}
}

// TestGoldEmptyFlagInBatchOutput: the flag reaches the JSON a trainer reads
// (`rlsearch reward`, /v1/rewards/qa), also for a rollout without answer.
func TestGoldEmptyFlagInBatchOutput(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ScoreBatch(context.Background(), KindQA, []json.RawMessage{
		json.RawMessage(`{"id": "a", "golden_answers": ["A"], "response": "<answer>A</answer>"}`),
		json.RawMessage(`{"id": "b", "golden_answers": ["A"], "response": "no answer"}`),
		json.RawMessage(`{"id": "c", "golden_answers": ["−5"], "response": "<answer>-5</answer>"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		`"em":1,"f1":1,"contains":1,"gold_empty_after_normalize":true`,
		`"em":0,"f1":0,"contains":0,"gold_empty_after_normalize":true`,
		`"em":1,"f1":1,"contains":1}`,
	} {
		b, _ := json.Marshal(res[i])
		if !strings.Contains(string(b), want) {
			t.Errorf("result %d: %s, want it to contain %s", i, b, want)
		}
	}
}

// TestUnicodeFoldProperty: random strings score EM 1 and F1 1 against their
// NFD, NFC and NFKC forms, and Normalize is idempotent.
func TestUnicodeFoldProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 3))
	pieces := []string{"a", "e", "the", " ", "-", "'", "\"", "é", "e\u0301", "\u0323", "\u2212", "\u2013", "\u201c", "\u2019",
		"\u00ab", "\uff21", "\ufb01", "\u212b", "\u00a0", "5", "\u00bd", "\u1112\u1161", "Ω", "İ"}
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		if n := Normalize(s); Normalize(n) != n {
			t.Fatalf("Normalize not idempotent on %+q: %+q then %+q", s, n, Normalize(n))
		}
		if blank(s) {
			continue // blank: never matches
		}
		for _, f := range []norm.Form{norm.NFD, norm.NFC, norm.NFKC, norm.NFKD} {
			v := f.String(s)
			if !ExactMatch(v, []string{s}) || F1(v, []string{s}) != 1 {
				t.Fatalf("%+q vs its %v form %+q: EM %v F1 %v, want 1, 1", s, f, v, ExactMatch(v, []string{s}), F1(v, []string{s}))
			}
		}
	}
}

// TestProRetrievalMultipleAnswers: repeated think/answer pairs earn less
// than full format credit, and less in total than answering once (issue 13).
func TestProRetrievalMultipleAnswers(t *testing.T) {
	p, err := NewProRetrieval(ProRetrievalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	prog := strings.TrimSuffix(strings.TrimPrefix(goodProgram, "<answer>"), "</answer>")
	for _, tc := range []struct {
		name, resp string
		f          float64
	}{
		{"once", "<think>a</think><answer>" + prog + "</answer>", 1},
		{"issue input: empty object then program", "<think>a</think><answer>{}</answer><think>b</think><answer>" + prog + "</answer>", MultiAnswerFormat},
		{"the same program twice", "<answer>" + prog + "</answer><answer>" + prog + "</answer>", MultiAnswerFormat},
		// The block regex (Search-R1's) spans from the first <answer>: not JSON.
		{"unclosed extra answer first", "<answer>draft <answer>" + prog + "</answer>", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := p.Score(context.Background(), ProRetrievalRollout{Response: tc.resp, Executed: true, Ranked: []string{"g"}, GroundTruth: []string{"g"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Format != tc.f || !near(res.Total, tc.f) || (tc.f < 1) != (res.FormatError != "") {
				t.Errorf("format %v total %v (%q); want format %v, total %v", res.Format, res.Total, res.FormatError, tc.f, tc.f)
			}
		})
	}
}

// TestSearchP1MultipleAnswers: Search-P1's soft format already gives the
// answer part 0.5 for more than one answer block; the total is below the
// single-answer one.
func TestSearchP1MultipleAnswers(t *testing.T) {
	s, err := NewSearchP1(SearchP1Config{})
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.Score(context.Background(), SearchP1Rollout{ID: "x", GoldenAnswers: []string{"2009"}, Response: informantResponse("2009")})
	if err != nil {
		t.Fatal(err)
	}
	two, err := s.Score(context.Background(), SearchP1Rollout{ID: "x", GoldenAnswers: []string{"2009"},
		Response: informantResponse("2008</answer><reasoning>no, 2009</reasoning><answer>2009")})
	if err != nil {
		t.Fatal(err)
	}
	if two.FormatParts.Answer >= 1 || two.Format >= one.Format || two.Total >= one.Total {
		t.Errorf("two answer blocks: answer part %v, format %v, total %v; one block: %v, %v, %v; want less",
			two.FormatParts.Answer, two.Format, two.Total, one.FormatParts.Answer, one.Format, one.Total)
	}
}

// FuzzAnswerNFD: any non-blank valid UTF-8 answer matches itself in its NFD
// and NFKC forms (EM 1, F1 1, contained), and Normalize is idempotent.
// Found cases are kept in testdata/fuzz/FuzzAnswerNFD.
func FuzzAnswerNFD(f *testing.F) {
	for _, s := range []string{"Beyonce\u0301", "\u22125", "\u201cParis\u201d", "A", "\u00e5\u201c\u0323", "İstanbul"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		if n := Normalize(s); Normalize(n) != n {
			t.Fatalf("Normalize not idempotent on %+q: %+q then %+q", s, n, Normalize(n))
		}
		if blank(s) {
			return
		}
		for _, v := range []string{norm.NFD.String(s), norm.NFKC.String(s)} {
			if sc := ScoreQA(v, true, []string{s}); sc.EM != 1 || sc.F1 != 1 || sc.Contains != 1 {
				t.Fatalf("%+q vs gold %+q: %+v, want EM, F1, contains 1", v, s, sc)
			}
		}
	})
}
