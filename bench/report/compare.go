package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rlsearch/rlsearch/bench"
)

// Alpha is the significance level of Compare's Mann-Whitney U test (as
// benchstat's default).
const Alpha = 0.05

// Diff is one row present in both reports of a comparison.
type Diff struct {
	Suite, System, Config, Unit string
	Old, New                    bench.Stats
	// Delta is (new - old) / old median throughput, as a fraction.
	Delta float64
	// P is the two-sided p-value of the Mann-Whitney U test on the two
	// sets of repetition throughputs (1 when either has one repetition).
	P float64
	// Overlap is true when the min–max ranges of the two overlap.
	Overlap bool
}

// Significant reports whether the difference is both outside the ranges
// and below Alpha. With 3 repetitions a side the smallest possible
// two-sided p is 0.1, so Significant needs at least 4+4 repetitions (as
// with benchstat); Overlap alone is the weaker, "significance-ish" marker.
func (d Diff) Significant() bool { return !d.Overlap && d.P <= Alpha }

// Compare matches the rows of old and new by suite, system and config and
// returns one Diff per matched row, in new's order, plus the keys found in
// only one of them ("old only: ...", "new only: ...").
func Compare(old, new *bench.Report) (diffs []Diff, unmatched []string) {
	oldBy := map[string]bench.Row{}
	for _, r := range old.Rows {
		oldBy[r.Key()] = r
	}
	seen := map[string]bool{}
	for _, n := range new.Rows {
		o, ok := oldBy[n.Key()]
		if !ok {
			unmatched = append(unmatched, fmt.Sprintf("new only: %s %s %s", n.Suite, n.System, n.Config))
			continue
		}
		seen[n.Key()] = true
		ov, nv := throughputs(o), throughputs(n)
		d := Diff{Suite: n.Suite, System: n.System, Config: n.Config, Unit: n.Unit,
			Old: bench.StatsOf(ov), New: bench.StatsOf(nv), P: MannWhitneyP(ov, nv)}
		if d.Old.Median != 0 {
			d.Delta = (d.New.Median - d.Old.Median) / d.Old.Median
		}
		d.Overlap = d.Old.Min <= d.New.Max && d.New.Min <= d.Old.Max
		diffs = append(diffs, d)
	}
	for _, o := range old.Rows {
		if !seen[o.Key()] {
			unmatched = append(unmatched, fmt.Sprintf("old only: %s %s %s", o.Suite, o.System, o.Config))
		}
	}
	return diffs, unmatched
}

func throughputs(r bench.Row) []float64 {
	v := make([]float64, len(r.Reps))
	for i, p := range r.Reps {
		v[i] = p.Throughput
	}
	return v
}

// WriteCompare prints the comparison benchstat-style: per row the old and
// new median ± half-range %, and the change, or "~" when the ranges
// overlap; "(p=… n=…+…)" follows, with "*" when Significant.
func WriteCompare(w io.Writer, diffs []Diff, unmatched []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "suite\tsystem\tconfig\tunit\told\tnew\tdelta\t\n")
	for _, d := range diffs {
		delta := "~"
		if !d.Overlap {
			delta = fmt.Sprintf("%+.1f%%", 100*d.Delta)
		}
		star := ""
		if d.Significant() {
			star = " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s ±%.0f%%\t%s ±%.0f%%\t%s\t(p=%.3f n=%d+%d)%s\n", d.Suite, d.System, d.Config, d.Unit,
			Num(d.Old.Median), 100*d.Old.Spread, Num(d.New.Median), 100*d.New.Spread, delta, d.P, d.Old.N, d.New.N, star)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(unmatched) > 0 {
		fmt.Fprintf(w, "\nnot compared:\n  %s\n", strings.Join(unmatched, "\n  "))
	}
	_, err := fmt.Fprintf(w, "\n~: the min–max ranges overlap; *: ranges apart and Mann-Whitney U p ≤ %.2f (needs ≥ 4 repetitions a side)\n", Alpha)
	return err
}

// MannWhitneyP is the two-sided p-value of the Mann-Whitney U test of x
// against y: exact (by counting rank-sum arrangements) when there are no
// ties and len(x)+len(y) ≤ 40, else the normal approximation with tie
// correction and continuity correction. It returns 1 when either sample is
// empty, when there are fewer than 3 values in all, or when every value is
// equal.
func MannWhitneyP(x, y []float64) float64 {
	n1, n2 := len(x), len(y)
	if n1 < 1 || n2 < 1 || n1+n2 < 3 {
		return 1
	}
	type obs struct {
		v  float64
		gx bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int { return cmpF(a.v, b.v) })
	n := len(all)
	ranks := make([]float64, n)
	ties := false
	var tieTerm float64 // Σ (t³ - t)
	for i := 0; i < n; {
		j := i
		for j+1 < n && all[j+1].v == all[i].v {
			j++
		}
		if j > i {
			ties = true
			t := float64(j - i + 1)
			tieTerm += t*t*t - t
		}
		for k := i; k <= j; k++ {
			ranks[k] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	var r1 float64
	for i, o := range all {
		if o.gx {
			r1 += ranks[i]
		}
	}
	u := r1 - float64(n1*(n1+1))/2
	if !ties && n <= 40 {
		return exactP(n1, n2, int(math.Round(u)))
	}
	mu := float64(n1*n2) / 2
	nf := float64(n)
	sigma2 := float64(n1*n2) / 12 * ((nf + 1) - tieTerm/(nf*(nf-1)))
	if sigma2 <= 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / math.Sqrt(sigma2)
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// exactP is the two-sided exact p-value of U = u for samples of n1 and n2
// without ties: the fraction of the C(n1+n2, n1) equally likely rank
// assignments whose U is at least as far from its mean.
func exactP(n1, n2, u int) float64 {
	maxU := n1 * n2
	// count[k][s]: ways to pick k of the values seen so far with U-sum s,
	// built with the classic recurrence over (n1, n2).
	// f(i, j, s) = f(i-1, j, s-j) + f(i, j-1, s).
	f := make([][][]float64, n1+1)
	for i := range f {
		f[i] = make([][]float64, n2+1)
		for j := range f[i] {
			f[i][j] = make([]float64, maxU+1)
		}
	}
	for i := 0; i <= n1; i++ {
		for j := 0; j <= n2; j++ {
			if i == 0 || j == 0 {
				f[i][j][0] = 1
				continue
			}
			for s := 0; s <= i*j; s++ {
				var v float64
				if s-j >= 0 {
					v += f[i-1][j][s-j]
				}
				v += f[i][j-1][s]
				f[i][j][s] = v
			}
		}
	}
	var total, le, ge float64
	for s := 0; s <= maxU; s++ {
		c := f[n1][n2][s]
		total += c
		if s <= u {
			le += c
		}
		if s >= u {
			ge += c
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}
