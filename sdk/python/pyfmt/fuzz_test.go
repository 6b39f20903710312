package pyfmt

import (
	"math"
	"math/big"
	"testing"
)

// Seeds live in testdata/fuzz/<FuzzName> as well.
func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"", ">10", "0=+#20,.3f", "_x", "z.2%", "\u00e9^7", ".", "99999999999999999999", "*<-z#030_.5G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := ParseSpec(spec)
		if err != nil {
			return
		}
		FormatInt(big.NewInt(-12345), s)
		FormatInt(new(big.Int).Lsh(big.NewInt(1), 200), s)
		for _, x := range []float64{0, -0.0, 1.5e-300, 123456.789, math.Inf(-1), math.NaN(), 1e308} {
			FormatFloat(x, s)
		}
		FormatStr("héllo", s)
	})
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"", "{}", "{0!r:>{1}}", "{a.b[c]}", "{{x}}", "{:{:{}}}", "{0[}", "{!", "}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, _ := ParseFormat(s)
		for _, p := range parts {
			if p.Field != nil && p.Field.Index < -1 {
				t.Fatalf("bad index %d", p.Field.Index)
			}
		}
	})
}

func FuzzParsePercent(f *testing.F) {
	for _, s := range []string{"", "%d", "%(k)-#08.3f", "%*.*s", "%%", "%", "%(", "%ll5q", "%c%r%a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, _ := ParsePercent(s)
		for _, p := range parts {
			if p.Conv == 0 {
				continue
			}
			if p.WidthStar {
				p.Width = 3
			}
			if p.PrecStar {
				p.Prec = 2
			}
			PercentInt(big.NewInt(-7), p)
			PercentFloat(2.5, p)
			PercentStr("ab", p)
		}
	})
}
