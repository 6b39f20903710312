package pyre

import (
	"regexp"
	"strings"
	"testing"
)

var benchText = strings.Repeat("The café in Zürich opened in 1998; its owner, Anaïs, sells 12 kinds of coffee. ", 1200)

// BenchmarkFindAllWords compares FindAll(\w+) with Go's regexp FindAllString
// over the same ~100 KB text (Python semantics cost: the search-from-position
// form of the pattern).
func BenchmarkFindAllWords(b *testing.B) {
	r := MustCompile(`\w+`, 0)
	b.SetBytes(int64(len(benchText)))
	for i := 0; i < b.N; i++ {
		r.FindAll(benchText)
	}
}

func BenchmarkGoRegexpFindAllWords(b *testing.B) {
	r := regexp.MustCompile(`[\p{L}\p{N}_]+`)
	b.SetBytes(int64(len(benchText)))
	for i := 0; i < b.N; i++ {
		r.FindAllString(benchText, -1)
	}
}
