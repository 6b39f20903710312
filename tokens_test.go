package rlsearch

import "testing"

func TestTokenCounters(t *testing.T) {
	for _, tc := range []struct {
		text         string
		bound, words int
	}{
		{"", 0, 0},
		{"a b c", 2, 3},           // 5 letter/space bytes at 1/4, rounded up
		{"2009", 4, 1},            // digits count 1 each (Qwen3 splits digits)
		{"Marketing", 3, 1},       // ⌈9/4⌉
		{"é", 1, 1},               // two non-ASCII bytes at 1/2
		{"a,b", 2, 1},             // punctuation 1, letters 1/4: ⌈6/4⌉
		{"\u3000x\u3000", 4, 1},   // U+3000 is 3 non-ASCII bytes (1/2 each) and Unicode space
		{"one\ttwo\nthree", 4, 3}, // 13 bytes at 1/4
	} {
		if got := (BoundTokens{}).CountTokens(tc.text); got != tc.bound {
			t.Errorf("BoundTokens(%q) = %d, want %d", tc.text, got, tc.bound)
		}
		if got := (WhitespaceTokens{}).CountTokens(tc.text); got != tc.words {
			t.Errorf("WhitespaceTokens(%q) = %d, want %d", tc.text, got, tc.words)
		}
	}
}
