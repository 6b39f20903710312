package reward

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var updateJudgeGolden = flag.Bool("update-judge", false, "rewrite testdata/judge_terms.json from the current judge normaliser")

// judgeStrings are the fixed inputs whose terms and judgements
// testdata/judge_terms.json pins: the reward values of the lexical judge
// must not move when the search analyzer (package bm25) changes. The
// golden was recorded with bm25.Analyze on 2026-12-02, before the judge got
// its own normaliser.
func judgeStrings() []string {
	s := []string{
		"", " ", "the", "The a an AND of", "!!! ... ???", "Search for the capital of France",
		"Step 2: identify the director of The Informant!", "Who directed The Informant! (2009)?",
		"Beyoncé's first album", "Beyonce\u0301's first album", "Obama’s mother’s birthplace", "JAMES'S",
		"ies", "sses", "eed", "eeds", "caresses ponies ties caress cats", "feed agreed plastered bled motoring sing",
		"conflated troubled sized hopping tanned falling hissing fizzed failing filing", "happy sky",
		"relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli",
		"vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
		"triplicate formative formalize electriciti electrical hopeful goodness",
		"revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
		"probate rate cease controll roll", "generalizations oscillators", "running runner runs ran",
		"3.14 1,000,000 2nd 1990s U.S.A. e-mail o'neill don't can't", "x86_64 foo_bar foo-bar C++ C# .NET",
		"東京タワーは日本にあります", "서울은 한국의 수도입니다", "Москва — столица России", "Αθήνα", "עברית ערבית العربية",
		"emoji 😀 ⭐ ⌚ 🇫🇷 test", "tab\tnew\nline\r\nend", "\xff\xfe invalid \xc3 utf8 \xe2\x82", "ＡＢＣ fullwidth ＇s",
		"İstanbul ǅ ß ﬁ", "NFC: e\u0301 vs \u00e9; A\u030a vs \u00c5",
		strings.Repeat("a", 300), strings.Repeat("é", 260) + " end", strings.Repeat("😀", 130),
		"What year did the band that recorded Thriller's producer first win a Grammy?",
		"The Eiffel Tower was completed in 1889 for the Exposition Universelle in Paris.",
		"find search identify determine look up get check verify confirm retrieve",
		"answer question information info step first second third fourth next then final finally",
		"what which who whom whose when where why how query use using based result results about from out also need needs know learn obtain locate",
	}
	return s
}

// judgeCases are fixed requests whose LexicalJudge answers the golden pins.
func judgeCases() []JudgeRequest {
	steps := []string{"Search for the director of The Informant!", "Find the birthplace of that director", "Step 3: determine the year he was born", "Identify the director of The Informant"}
	return []JudgeRequest{
		{Kind: JudgeCoverage, Steps: steps, Actions: []string{"The Informant! 2009 film director", "Steven Soderbergh birthplace", "Soderbergh born year"}},
		{Kind: JudgeCoverage, Steps: steps, Actions: []string{"directors of films"}},
		{Kind: JudgeCoverage, Steps: []string{"search then find", "Beyoncé's first album"}, Actions: []string{"search find", "Beyonce\u0301 albums first"}},
		{Kind: JudgePlan, Question: "Where was the director of The Informant! born?", Steps: steps},
		{Kind: JudgePlan, Steps: []string{"capital of France", "France capital", "population of Paris"}},
		{Kind: JudgeReasoning, Evidence: "Steven Soderbergh was born in Atlanta, Georgia, in 1963.", Golds: []string{"Atlanta, Georgia", "Atlanta"}},
		{Kind: JudgeReasoning, Evidence: "He was born in the south.", Golds: []string{"Atlanta, Georgia"}},
		{Kind: JudgeReasoning, Evidence: "東京タワー 😀 running", Golds: []string{"東京", "runs"}},
	}
}

// judgeGolden is testdata/judge_terms.json. Inputs are Go-quoted
// (strconv.Quote) so that invalid UTF-8 survives JSON.
type judgeGolden struct {
	Terms      []judgeTermsCase `json:"terms"`
	Judgements []Judgement      `json:"judgements"`
}

type judgeTermsCase struct {
	In    string   `json:"in"`
	Terms []string `json:"terms"`
}

// TestJudgeNormaliserPinned: the judge's terms and LexicalJudge's
// judgements on judgeStrings and judgeCases are byte for byte those of
// testdata/judge_terms.json. A failure means reward values changed; rerun
// with -update-judge only for an intended, announced change.
func TestJudgeNormaliserPinned(t *testing.T) {
	var got judgeGolden
	for _, s := range judgeStrings() {
		terms := judgeTerms(s)
		if terms == nil {
			terms = []string{}
		}
		got.Terms = append(got.Terms, judgeTermsCase{strconv.Quote(s), terms})
	}
	for _, req := range judgeCases() {
		j, err := LexicalJudge{}.Judge(context.Background(), req)
		if err != nil {
			t.Fatalf("Judge(%+v): %v", req, err)
		}
		got.Judgements = append(got.Judgements, j)
	}
	path := filepath.Join("testdata", "judge_terms.json")
	if *updateJudgeGolden {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want judgeGolden
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(want.Terms) != len(got.Terms) {
		t.Fatalf("golden has %d strings, test has %d (rerun with -update-judge after adding inputs)", len(want.Terms), len(got.Terms))
	}
	for i, w := range want.Terms {
		if g := got.Terms[i]; !reflect.DeepEqual(g, w) {
			t.Errorf("judgeTerms(%s) = %q, want %s: %q", g.In, g.Terms, w.In, w.Terms)
		}
	}
	if !reflect.DeepEqual(got.Judgements, want.Judgements) {
		t.Errorf("judgements = %+v\nwant %+v", got.Judgements, want.Judgements)
	}
}

// FuzzJudgeTerms: the judge's normaliser takes any text without panicking
// and yields non-empty, valid UTF-8 terms.
func FuzzJudgeTerms(f *testing.F) {
	for _, s := range judgeStrings() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range judgeTerms(s) {
			if term == "" || !utf8.ValidString(term) {
				t.Fatalf("judgeTerms(%q) has term %q", s, term)
			}
		}
	})
}
