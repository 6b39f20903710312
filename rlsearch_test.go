package rlsearch

import (
	"slices"
	"testing"
)

func TestDocumentParts(t *testing.T) {
	for _, tc := range []struct{ contents, title, text string }{
		{"\"Paris\"\nParis is a city.", "Paris", "Paris is a city."},
		{"\"A \"quoted\" title\"\nline one\nline two", `A "quoted" title`, "line one\nline two"},
		{"no title line", "", "no title line"},
		{"\"\"\n", "", ""},
	} {
		d := Document{ID: "x", Contents: tc.contents}
		if d.Title() != tc.title || d.Text() != tc.text {
			t.Errorf("%q: Title %q Text %q, want %q %q", tc.contents, d.Title(), d.Text(), tc.title, tc.text)
		}
	}
	if got := MakeContents("T", "body"); got != "\"T\"\nbody" {
		t.Errorf("MakeContents = %q", got)
	}
}

func TestLess(t *testing.T) {
	for _, tc := range []struct {
		a, b Hit
		want bool
	}{
		{Hit{Row: 5, Score: 2}, Hit{Row: 1, Score: 1}, true}, // higher score first
		{Hit{Row: 1, Score: 1}, Hit{Row: 5, Score: 2}, false},
		{Hit{Row: 1, Score: 1}, Hit{Row: 2, Score: 1}, true}, // tie: lower row first
		{Hit{Row: 2, Score: 1}, Hit{Row: 1, Score: 1}, false},
		{Hit{Row: 1, Score: 1}, Hit{Row: 1, Score: 1}, false},
	} {
		if got := Less(tc.a, tc.b); got != tc.want {
			t.Errorf("Less(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestDistinct(t *testing.T) {
	xs := []string{"b", "a", "b", "c", "a"}
	uniq, at := Distinct(xs)
	if want := []string{"b", "a", "c"}; !slices.Equal(uniq, want) {
		t.Fatalf("uniq %v, want %v", uniq, want)
	}
	for i, x := range xs {
		if uniq[at[i]] != x {
			t.Errorf("uniq[at[%d]] = %q, want %q", i, uniq[at[i]], x)
		}
	}
	if u, a := Distinct([]int(nil)); len(u) != 0 || len(a) != 0 {
		t.Errorf("empty input: %v %v", u, a)
	}
}
