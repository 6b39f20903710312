package pyre

import (
	"fmt"
	"testing"
)

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"", "a|b", `(?P<n>\w+)@(\d{2,3})`, `[^\W\d]`, `(?x) a # c`, `\b$`, `(?i:a)(?-i:b)`, `[\s\S]*?`, `x{,3}`, `(a)\1`} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, p string, flags int) {
		r, err := Compile(p, Flags(flags)&(I|M|S|X|A))
		if err != nil {
			return
		}
		m := r.Metered(func(uint64) {})
		for _, s := range []string{"", "abc\n", "héllo wörld 12\n3 ", "aaaa"} {
			if a, b := fmt.Sprint(spans(r.Search(s)), r.FindAll(s)), fmt.Sprint(spans(m.Search(s)), m.FindAll(s)); a != b {
				t.Fatalf("%q on %q: regexp %s, metered %s", p, s, a, b)
			}
			r.Search(s)
			r.Match(s)
			r.Fullmatch(s)
			r.FindAll(s)
			r.Split(s, 0)
			if _, err := r.Sub(`<\g<0>>`, s, 0); err != nil {
				t.Fatalf("sub on %q: %v", p, err)
			}
		}
	})
}
