package bm25

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"punctuation only", "   ...!!", nil},
		{"stop words only", "The and of a", nil},
		{"all 33 stop words", "a an and are as at be but by for if in into is it no not of on or such that the their then there these they this to was will with", nil},
		{"possessives", "John's JOHN’S dogs' Dogs's", []string{"john", "john", "dog", "dog"}},
		{"fullwidth apostrophe possessive", "Bob＇s", []string{"bob"}},
		{"acronyms numbers hyphens", "The U.S.A. won 3.14159 medals in 2018-2019, e.g. at 10:30.", []string{"u.s.a", "won", "3.14159", "medal", "2018", "2019", "e.g", "10", "30"}},
		{"porter suffixes", "Running runs ran runner relational generalization happily", []string{"run", "run", "ran", "runner", "relat", "gener", "happili"}},
		{"porter paper examples", "caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing",
			[]string{"caress", "poni", "ti", "caress", "cat", "feed", "agre", "plaster", "bled", "motor", "sing", "conflat", "troubl", "size", "hop", "tan", "fall", "hiss", "fizz", "fail", "file"}},
		{"lucene whole-suffix words", "ies sses eed eeds", []string{"i", "ss", "eed", "eed"}},
		{"short words unstemmed", "is as us ox", []string{"us", "ox"}},
		{"cjk ideographs one per token, kana, hangul", "日本語のテキスト カタカナ 한국어", []string{"日", "本", "語", "の", "テキスト", "カタカナ", "한국어"}},
		{"underscore apostrophe diacritics", "foo_bar ___ don't Ærøskøbing naïve café", []string{"foo_bar", "don't", "ærøskøbing", "naïv", "café"}},
		{"contractions", "I'm O'Reilly's", []string{"i'm", "o'reilli"}},
		{"urls split", "e-mail user@example.com http://x.org/a_b", []string{"e", "mail", "user", "example.com", "http", "x.org", "a_b"}},
		{"emoji", "👍🐶 ❤️ 🇺🇸", []string{"👍", "🐶", "❤️", "🇺🇸"}},
		{"unicode lower case", "ΣΊΣΥΦΟΣ İstanbul", []string{"σίσυφοσ", "istanbul"}},
		{"corpus title line", "\"Robin Hood (2018 film)\"\nRobin Hood is an upcoming American action-adventure film",
			[]string{"robin", "hood", "2018", "film", "robin", "hood", "upcom", "american", "action", "adventur", "film"}},
		{"invalid utf8 is replaced", "ab\xffcd", []string{"ab", "cd"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Analyze(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Analyze(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestAnalyzeMaxTokenLength checks that long words are cut at 255 UTF-16
// units, as StandardTokenizer does, and never dropped.
func TestAnalyzeMaxTokenLength(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantLen []int // runes per token (no stemming applies to x/z runs)
	}{
		{"255 fits", strings.Repeat("x", 255), []int{255}},
		{"256 splits", strings.Repeat("x", 256), []int{255, 1}},
		{"600", strings.Repeat("z", 600), []int{255, 255, 90}},
		// 𝐱 (U+1D431, a letter) is two UTF-16 units: 127 fit in 255 units.
		{"astral letters", strings.Repeat("𝐱", 128), []int{127, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Analyze(tc.in)
			var lens []int
			for _, tok := range got {
				lens = append(lens, utf8.RuneCountInString(tok))
			}
			if !slices.Equal(lens, tc.wantLen) {
				t.Errorf("token lengths %v, want %v (cut at %d UTF-16 units)", lens, tc.wantLen, MaxTokenLength)
			}
		})
	}
}

func FuzzAnalyze(f *testing.F) {
	f.Add("The quick brown fox's 3.14 日本 👍")
	f.Add("\xff\xfe's")
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Analyze(s) {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("Analyze(%q) produced bad token %q", s, tok)
			}
		}
	})
}

func TestStopWordSwitchMatchesSet(t *testing.T) {
	if len(stopWords) != 33 {
		t.Fatalf("%d stop words, want Lucene's 33", len(stopWords))
	}
	for w := range stopWords {
		if !isStopWord([]byte(w)) {
			t.Errorf("isStopWord(%q) = false, want true", w)
		}
	}
	for _, w := range []string{"", "thes", "i", "he", "an'", "THE"} {
		if isStopWord([]byte(w)) {
			t.Errorf("isStopWord(%q) = true, want false", w)
		}
	}
}
