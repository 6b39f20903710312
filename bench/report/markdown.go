// Package report turns a bench.Report into the files of `rlsearch-bench
// run --out DIR`: report.json, report.md (one table per suite with medians,
// spreads, latency percentiles and the ratio ours/peer), plots as PNG and
// SVG (gonum.org/v1/plot), and compares two reports (`rlsearch-bench
// compare`). No cgo; functions are safe for concurrent use on distinct
// reports.
package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch/bench"
)

// Ratio is ours / peer for one pair of rows of the same suite and config:
// the median throughput of ours over the median throughput of the peer.
type Ratio struct {
	Suite, Config, Peer string
	Ours, Theirs        float64
	Value               float64 // Ours / Theirs; +Inf when the peer measured 0
	// CPU is the peer's median CPU time per operation over ours
	// (bench.Row.CPUPerOp): above 1, ours does the work on less CPU; 0
	// when either side did not measure it.
	CPU float64
}

// Ratios returns, for every row of ours (bench.Ours) that has rows of other
// systems with the same suite and config in rep, one Ratio per such peer,
// in row order.
func Ratios(rep *bench.Report) []Ratio {
	var out []Ratio
	for _, r := range rep.Rows {
		if r.System != bench.Ours {
			continue
		}
		ours := r.ThroughputStats().Median
		for _, p := range rep.Peer(r) {
			theirs := p.ThroughputStats().Median
			v := math.Inf(1)
			if theirs > 0 {
				v = ours / theirs
			}
			ra := Ratio{Suite: r.Suite, Config: r.Config, Peer: p.System, Ours: ours, Theirs: theirs, Value: v}
			if oc, ok := r.CPUPerOp(); ok && oc > 0 {
				if pc, ok := p.CPUPerOp(); ok {
					ra.CPU = pc / oc
				}
			}
			out = append(out, ra)
		}
	}
	return out
}

// suites returns the suites of rep in the order of Options.Suites, then any
// other suite (peer-only rows) in first-seen order.
func suites(rep *bench.Report) []string {
	out := slices.Clone(rep.Options.Suites)
	for _, r := range rep.Rows {
		if !slices.Contains(out, r.Suite) {
			out = append(out, r.Suite)
		}
	}
	for _, s := range rep.Skipped {
		if !slices.Contains(out, s.Suite) {
			out = append(out, s.Suite)
		}
	}
	return out
}

// WriteMarkdown writes report.md: the environment, then per suite a table
// (system, config, unit, median throughput, min–max and ±half-range %, p50,
// p95, p99 latency in ms, CPU µs per operation, the median of every Extra
// value, and ours/peer in throughput and CPU),
// the notes, the plots in plots (relative paths, by suite), and the skips.
func WriteMarkdown(w io.Writer, rep *bench.Report, plots map[string][]string) error {
	e := rep.Env
	b := &strings.Builder{}
	fmt.Fprintf(b, "# rlsearch bench report\n\n")
	fmt.Fprintf(b, "- machine: %s, %d cores (GOMAXPROCS %d), %.1f GiB memory, %s/%s, kernel %s\n",
		orDash(e.CPU), e.Cores, e.GOMAXPROCS, float64(e.MemoryBytes)/(1<<30), e.OS, e.Arch, orDash(e.Kernel))
	fmt.Fprintf(b, "- load average (1/5/15 min): before %.2f %.2f %.2f, after %.2f %.2f %.2f\n",
		e.LoadBefore[0], e.LoadBefore[1], e.LoadBefore[2], e.LoadAfter[0], e.LoadAfter[1], e.LoadAfter[2])
	dirty := ""
	if e.GitDirty {
		dirty = " (with uncommitted changes)"
	}
	fmt.Fprintf(b, "- build: %s, commit %s%s\n", orDash(e.GoVersion), orDash(e.GitCommit), dirty)
	o := rep.Options
	fmt.Fprintf(b, "- run: %s, %.0f s wall; suites %s; %d repetitions of at least %v each; threads %v; quick %v; seed %d\n",
		rep.Started.Format("2006-01-02 15:04 UTC"), rep.WallSeconds, strings.Join(o.Suites, ","), o.Reps, o.MinTime, o.Threads, o.Quick, o.Seed)
	if len(o.Set) > 0 {
		keys := slices.Sorted(maps.Keys(o.Set))
		var kv []string
		for _, k := range keys {
			kv = append(kv, k+"="+o.Set[k])
		}
		fmt.Fprintf(b, "- settings: %s\n", strings.Join(kv, " "))
	}
	fmt.Fprintf(b, "\nMedian throughput over the repetitions; spread = min–max (± half the range, %% of the median); "+
		"latencies in ms are per call (a batch call counts once), medians over the repetitions; "+
		"CPU µs/op = the process's CPU time (every thread) per operation, median over the repetitions; "+
		"ours/peer = median throughput of rlsearch over the peer's, same configuration, same run, "+
		"and (CPU r×) the peer's CPU µs/op over ours: above 1, ours does the work on less CPU.\n")
	if o.Interleave {
		fmt.Fprintf(b, "\nInterleaved: each repetition ran every case of ours, then every peer's, before the next repetition.\n")
	}

	ratios := Ratios(rep)
	matches := EqualRecall(rep)
	for _, s := range suites(rep) {
		var rows []bench.Row
		for _, r := range rep.Rows {
			if r.Suite == s {
				rows = append(rows, r)
			}
		}
		fmt.Fprintf(b, "\n## %s\n\n", s)
		if len(rows) > 0 {
			writeTable(b, rep, rows, ratios)
			writeEqualRecall(b, matches, s)
		}
		notes := map[string]bool{}
		for _, r := range rows {
			if r.Note != "" && !notes[r.Note] {
				notes[r.Note] = true
				fmt.Fprintf(b, "\n- %s: %s", r.System, r.Note)
			}
		}
		if len(notes) > 0 {
			b.WriteString("\n")
		}
		for _, sk := range rep.Skipped {
			if sk.Suite == s {
				who := "suite"
				if sk.Peer != "" {
					who = "peer " + sk.Peer
				}
				if !strings.HasPrefix(sk.Reason, bench.ErrSkip.Error()) {
					who += " failed"
				}
				fmt.Fprintf(b, "\n%s: %s\n", who, sk.Reason)
			}
		}
		for _, p := range plots[s] {
			fmt.Fprintf(b, "\n![%s](%s)\n", p, p)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeTable(b *strings.Builder, rep *bench.Report, rows []bench.Row, ratios []Ratio) {
	extraSet := map[string]bool{}
	for _, r := range rows {
		for _, p := range r.Reps {
			for k := range p.Extra {
				extraSet[k] = true
			}
		}
	}
	extras := slices.Sorted(maps.Keys(extraSet))
	hasLat, hasErr, hasPeer, hasCPU := false, false, false, false
	for _, r := range rows {
		for _, p := range r.Reps {
			hasLat = hasLat || p.P50ms > 0
			hasErr = hasErr || p.Errors > 0
			hasCPU = hasCPU || p.CPU > 0
		}
		hasPeer = hasPeer || r.System != bench.Ours || len(rep.Peer(r)) > 0
	}
	head := []string{"system", "config", "unit", "median", "spread"}
	if hasLat {
		head = append(head, "p50 ms", "p95 ms", "p99 ms")
	}
	if hasErr {
		head = append(head, "errors")
	}
	if hasCPU {
		head = append(head, "CPU µs/op")
	}
	head = append(head, extras...)
	if hasPeer {
		head = append(head, "ours/peer")
	}
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat(" --- |", len(head)))
	for _, r := range rows {
		st := r.ThroughputStats()
		cells := []string{r.System, "`" + r.Config + "`", r.Unit, Num(st.Median), Spread(st)}
		if hasLat {
			cells = append(cells,
				latNum(r.MedianOf(func(p bench.Rep) float64 { return p.P50ms })),
				latNum(r.MedianOf(func(p bench.Rep) float64 { return p.P95ms })),
				latNum(r.MedianOf(func(p bench.Rep) float64 { return p.P99ms })))
		}
		if hasErr {
			n := 0
			for _, p := range r.Reps {
				n += p.Errors
			}
			cells = append(cells, fmt.Sprint(n))
		}
		if hasCPU {
			if v, ok := r.CPUPerOp(); ok {
				cells = append(cells, latNum(v))
			} else {
				cells = append(cells, "")
			}
		}
		for _, k := range extras {
			if v, ok := r.ExtraMedian(k); ok {
				cells = append(cells, Num(v))
			} else {
				cells = append(cells, "")
			}
		}
		if hasPeer {
			var rs []string
			for _, ra := range ratios {
				if ra.Suite != r.Suite || ra.Config != r.Config {
					continue
				}
				cpu := ""
				if ra.CPU > 0 {
					cpu = " (CPU " + RatioNum(ra.CPU) + "×)"
				}
				switch {
				case r.System == bench.Ours:
					rs = append(rs, fmt.Sprintf("%s×%s vs %s", RatioNum(ra.Value), cpu, ra.Peer))
				case ra.Peer == r.System:
					rs = append(rs, RatioNum(ra.Value)+"×"+cpu)
				}
			}
			cells = append(cells, strings.Join(rs, ", "))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

// latNum is Num, or "–" for 0 (a row that did not measure latency).
func latNum(v float64) string {
	if v == 0 {
		return "–"
	}
	return Num(v)
}

// Spread formats min–max and ± half the range as % of the median.
func Spread(s bench.Stats) string {
	if s.N <= 1 {
		return "n=1"
	}
	return fmt.Sprintf("%s–%s (±%.1f%%)", Num(s.Min), Num(s.Max), 100*s.Spread)
}

// RatioNum formats a ratio with two decimals ("∞" for +Inf).
func RatioNum(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.2f", v)
}

// Num formats a measured value with about 3 significant digits (all
// integer digits from 100 on) and thousands separators: 12,345; 123; 12.3;
// 1.23; 0.0123.
func Num(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case a >= 1000:
		return thousands(fmt.Sprintf("%.0f", v))
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

func thousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
