package pyre

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// randPattern draws an RE2 pattern from a small grammar over the letters
// a, b and é: alternation, repetition (greedy and lazy, counted), groups,
// classes, anchors and word boundaries.
func randPattern(rng *rand.Rand, depth int) string {
	atoms := []string{"a", "b", "é", ".", "[ab]", "[^a]", `\w`, `\s`, "", "^", "$", `\b`, `\B`, `\A`, `\z`, "(?i:A)", "(?s:.)", "(?m:$)", "(?m:^)"}
	if depth == 0 || rng.IntN(3) == 0 {
		return atoms[rng.IntN(len(atoms))]
	}
	x := randPattern(rng, depth-1)
	switch rng.IntN(9) {
	case 0:
		return x + randPattern(rng, depth-1)
	case 1:
		return x + "|" + randPattern(rng, depth-1)
	case 2:
		return "(" + x + ")"
	case 3:
		return "(?:" + x + ")*"
	case 4:
		return "(" + x + ")+?"
	case 5:
		return "(?:" + x + ")?"
	case 6:
		return fmt.Sprintf("(%s){%d,%d}", x, rng.IntN(3), 2+rng.IntN(3))
	case 7:
		return "(" + x + ")*?"
	}
	return x + randPattern(rng, depth-1) + randPattern(rng, depth-1)
}

func randSubject(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(12) {
		b.WriteString([]string{"a", "b", "é", " ", "\n", "A", "\xff"}[rng.IntN(7)])
	}
	return b.String()
}

// TestMeteredEqualsRegexp: the metered matcher returns regexp's
// FindStringSubmatchIndex on random patterns and subjects (the
// differential test of vm.go against its oracle, Go's regexp), and every
// match reports its work.
func TestMeteredEqualsRegexp(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n := 0
	for range 3000 {
		p := randPattern(rng, 4)
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		v, err := newVM(p)
		if err != nil {
			t.Fatalf("%q: regexp compiles it, newVM: %v", p, err)
		}
		for range 8 {
			s := randSubject(rng)
			var steps uint64
			got := v.find(s, func(n uint64) { steps += n })
			want := re.FindStringSubmatchIndex(s)
			if !slices.Equal(got, want) {
				t.Fatalf("%q on %q: metered %v, regexp %v", p, s, got, want)
			}
			if steps == 0 {
				t.Fatalf("%q on %q: no steps reported", p, s)
			}
			n++
		}
	}
	if n < 10000 {
		t.Fatalf("only %d comparisons", n)
	}
}

// TestMeterStopsCatastrophicPatterns: patterns whose matching costs grow
// with the subject times the program (counted repetition) or with the
// square of the subject (findall re-scanning to the end after every
// match) report that work to the Meter as it happens, so a budget stops
// them: the Meter's panic ends the match within MeterEvery steps of the
// budget. Go's regexp takes ~30 s on the findall case, uninterruptibly.
func TestMeterStopsCatastrophicPatterns(t *testing.T) {
	const budget = 1_000_000
	a := strings.Repeat("a", 40_000)
	for _, c := range []struct {
		name, pattern string
		run           func(r *Regexp)
	}{
		{"findall a*b|a", `a*b|a`, func(r *Regexp) { r.FindAll(a) }},
		{"sub (?:a|b)*c|a", `(?:a|b)*c|a`, func(r *Regexp) { r.Sub("x", a, 0) }},
		{"split a*b|a", `a*b|a`, func(r *Regexp) { r.Split(a, 0) }},
		{"search nested counted", `(?:(?:a|aa){0,30}){0,30}b`, func(r *Regexp) { r.Search(a + a) }},
		{"fullmatch (a+)+$ on a*40 b", `(a+)+$`, func(r *Regexp) { r.Fullmatch(strings.Repeat(a, 25) + "b") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var steps uint64
			type stop struct{}
			m := MustCompile(c.pattern, 0).Metered(func(n uint64) {
				steps += n
				if steps > budget {
					panic(stop{})
				}
			})
			stopped := func() (s bool) {
				defer func() {
					if _, ok := recover().(stop); ok {
						s = true
					}
				}()
				c.run(m)
				return false
			}()
			if !stopped || steps > budget+MeterEvery {
				t.Fatalf("stopped %v after %d steps, want the meter to stop it within %d of the budget %d", stopped, steps, MeterEvery, budget)
			}
			// The same Regexp still answers after a stopped match (the
			// pooled queues were emptied).
			if got := MustCompile(c.pattern, 0).Metered(func(uint64) {}).Search("ab"); (got == nil) != (regexp.MustCompile(c.pattern).FindStringIndex("ab") == nil) {
				t.Fatalf("after a stopped match: %v", got)
			}
		})
	}
	// The classic catastrophic-backtracking case is linear here: it ends
	// well inside the budget.
	var steps uint64
	if m := MustCompile(`(a+)+$`, 0).Metered(func(n uint64) { steps += n }).Search(strings.Repeat("a", 40) + "b"); m != nil || steps > 10_000 {
		t.Fatalf("(a+)+$ on 'a'*40+'b': match %v after %d steps", m, steps)
	}
}

// BenchmarkMetered compares the metered matcher with Go's regexp on
// ordinary patterns over ~100 KB of text, and reports ns per step (the
// sandbox's charge rate is derived from it).
func BenchmarkMetered(b *testing.B) {
	for _, p := range []string{`\w+`, `\d{4}`, `(\w+)@(\w+)\.com`, `[A-Z][a-z]+ [A-Z][a-z]+`} {
		for _, metered := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/metered=%v", p, metered), func(b *testing.B) {
				r := MustCompile(p, 0)
				var steps uint64
				if metered {
					r = r.Metered(func(n uint64) { steps += n })
				}
				b.SetBytes(int64(len(benchText)))
				t0 := time.Now()
				for i := 0; i < b.N; i++ {
					r.FindAll(benchText)
				}
				if metered {
					b.ReportMetric(float64(time.Since(t0).Nanoseconds())/float64(steps), "ns/step")
					b.ReportMetric(float64(steps)/float64(b.N)/float64(len(benchText)), "steps/byte")
				}
			})
		}
	}
}
