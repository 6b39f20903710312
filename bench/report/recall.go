package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/bench"
)

// RecallMatch compares one peer row with ours at equal recall: of ours'
// rows of the same configuration except the search width (the "ef=N"
// token of the config) and of one variant (what follows the peer's config,
// e.g. " compressed"), ours' throughput at the peer's median recall@10. It
// is the ann-benchmarks reading of a recall/throughput grid (queries/s at
// a recall), where Ratios compares equal ef. Two readings are given:
//   - Measured: the fastest measured row of ours whose recall is at least
//     the peer's (a lower bound: on a coarse ef grid the next width up may
//     cost 2–4× more than the recall needs).
//   - Interpolated: between the two consecutive widths of ours (by ef)
//     whose recalls bracket the peer's, log(q/s) linear in recall; at or
//     below ours' smallest width, that width's (no extrapolation). Never
//     below Measured.
type RecallMatch struct {
	Suite, Peer, PeerConfig string
	PeerRecall, PeerQPS     float64
	PeerCPU                 float64 // µs per query, 0 when not measured
	Variant                 string  // suffix of ours' config after the peer's, "" for the same
	// Found is false when no row of ours reaches the peer's recall; then
	// OursConfig is the row of ours with the highest recall and the
	// throughputs are 0.
	Found      bool
	OursConfig string
	OursRecall float64
	OursQPS    float64 // Measured
	OursCPU    float64 // µs per query of the Measured row
	Value      float64 // OursQPS / PeerQPS
	CPU        float64 // PeerCPU / OursCPU, 0 when either is not measured
	// InterpQPS is the Interpolated throughput, between the widths
	// InterpFrom and InterpTo (equal when one row answers); InterpValue
	// is InterpQPS / PeerQPS.
	InterpQPS, InterpValue float64
	InterpFrom, InterpTo   int
}

// widthFree removes the "ef=N" token of a config and returns N; ok is
// false when there is none.
func widthFree(config string) (key string, ef int, ok bool) {
	f := strings.Fields(config)
	for i, t := range f {
		if v, found := strings.CutPrefix(t, "ef="); found {
			if n, err := strconv.Atoi(v); err == nil {
				return strings.Join(slices.Delete(f, i, i+1), " "), n, true
			}
		}
	}
	return "", 0, false
}

// ourRow is one row as EqualRecall reads it.
type ourRow struct {
	config           string
	ef               int
	recall, qps, cpu float64
}

// recallPoint reads r's recall@10, median q/s, CPU per query and width;
// key is its config without the width. ok is false without a recall or an
// "ef=N" token.
func recallPoint(r bench.Row) (o ourRow, key string, ok bool) {
	rc, hasRecall := r.ExtraMedian(RecallKey)
	key, ef, hasEf := widthFree(r.Config)
	if !hasRecall || !hasEf {
		return ourRow{}, "", false
	}
	cpu, _ := r.CPUPerOp()
	return ourRow{r.Config, ef, rc, r.ThroughputStats().Median, cpu}, key, true
}

// EqualRecall returns a RecallMatch for every peer row of rep that has a
// recall@10 and an "ef=N" config token and rows of ours of the same suite
// and width-free configuration, per variant of ours, in row order.
func EqualRecall(rep *bench.Report) []RecallMatch {
	ours := map[string][]ourRow{} // suite + width-free config of ours
	for _, r := range rep.Rows {
		if o, key, ok := recallPoint(r); ok && r.System == bench.Ours {
			ours[r.Suite+"\x00"+key] = append(ours[r.Suite+"\x00"+key], o)
		}
	}
	var out []RecallMatch
	for _, p := range rep.Rows {
		po, key, ok := recallPoint(p)
		if !ok || p.System == bench.Ours {
			continue
		}
		rc, pcpu := po.recall, po.cpu
		variants := map[string][]ourRow{}
		var order []string
		for k, rows := range ours {
			suite, cfg, _ := strings.Cut(k, "\x00")
			if suite != p.Suite || !strings.HasPrefix(cfg, key) {
				continue
			}
			v := cfg[len(key):]
			if v != "" && v[0] != ' ' {
				continue // another configuration that starts alike
			}
			if _, seen := variants[v]; !seen {
				order = append(order, v)
			}
			variants[v] = rows
		}
		slices.Sort(order)
		for _, v := range order {
			m := RecallMatch{Suite: p.Suite, Peer: p.System, PeerConfig: p.Config, PeerRecall: rc, PeerQPS: p.ThroughputStats().Median, PeerCPU: pcpu, Variant: v}
			best := -1.0
			for _, o := range variants[v] {
				switch {
				case o.recall >= rc && (!m.Found || o.qps > best):
					m.Found, best = true, o.qps
					m.OursConfig, m.OursRecall, m.OursQPS, m.OursCPU = o.config, o.recall, o.qps, o.cpu
				case !m.Found && o.recall > m.OursRecall:
					m.OursConfig, m.OursRecall, m.OursQPS, m.OursCPU = o.config, o.recall, o.qps, o.cpu
				}
			}
			if m.Found {
				m.Value = math.Inf(1)
				if m.PeerQPS > 0 {
					m.Value = m.OursQPS / m.PeerQPS
				}
				if m.PeerCPU > 0 && m.OursCPU > 0 {
					m.CPU = m.PeerCPU / m.OursCPU
				}
				rows := slices.Clone(variants[v])
				slices.SortFunc(rows, func(a, b ourRow) int { return a.ef - b.ef })
				m.InterpQPS, m.InterpFrom, m.InterpTo = m.OursQPS, 0, 0
				if rows[0].recall >= rc {
					m.InterpFrom, m.InterpTo = rows[0].ef, rows[0].ef
					m.InterpQPS = max(m.OursQPS, rows[0].qps)
				}
				for i := 0; i+1 < len(rows) && m.InterpFrom == 0; i++ {
					a, b := rows[i], rows[i+1]
					if a.recall < rc && rc <= b.recall && a.qps > 0 && b.qps > 0 {
						t := (rc - a.recall) / (b.recall - a.recall)
						q := math.Exp(math.Log(a.qps) + t*(math.Log(b.qps)-math.Log(a.qps)))
						m.InterpQPS, m.InterpFrom, m.InterpTo = max(m.OursQPS, q), a.ef, b.ef
					}
				}
				if m.InterpFrom == 0 { // recall not monotone in ef: the measured row
					_, ef, _ := widthFree(m.OursConfig)
					m.InterpFrom, m.InterpTo = ef, ef
				}
				m.InterpValue = math.Inf(1)
				if m.PeerQPS > 0 {
					m.InterpValue = m.InterpQPS / m.PeerQPS
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// writeEqualRecall writes the table of EqualRecall's matches of suite s,
// if any.
func writeEqualRecall(b *strings.Builder, ms []RecallMatch, s string) {
	var rows []RecallMatch
	for _, m := range ms {
		if m.Suite == s {
			rows = append(rows, m)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "\n### At equal recall\n\nFor each peer row, ours (same configuration but ef; per variant) at the peer's median %s: "+
		"measured = the fastest row of ours whose recall is at least the peer's; interpolated = log(q/s) linear in recall "+
		"between the two consecutive ef of ours that bracket it (never below measured; no extrapolation). "+
		"\"not reached\": no ef of ours in this run reaches it (its best recall shown).\n\n", RecallKey)
	b.WriteString("| peer | peer config | peer recall | peer q/s | ours variant | ours measured config | its recall | its q/s | measured ours/peer | CPU peer/ours | interpolated ef | interpolated ours/peer |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, m := range rows {
		v := strings.TrimSpace(m.Variant)
		if v == "" {
			v = "as configured"
		}
		ratio, cpu, ief, iv := "not reached", "", "", "not reached"
		if m.Found {
			ratio = RatioNum(m.Value) + "×"
			if m.CPU > 0 {
				cpu = RatioNum(m.CPU) + "×"
			}
			ief = fmt.Sprint(m.InterpFrom)
			if m.InterpTo != m.InterpFrom {
				ief += "–" + fmt.Sprint(m.InterpTo)
			}
			iv = RatioNum(m.InterpValue) + "×"
		}
		fmt.Fprintf(b, "| %s | `%s` | %.3f | %s | %s | `%s` | %.3f | %s | %s | %s | %s | %s |\n",
			m.Peer, m.PeerConfig, m.PeerRecall, Num(m.PeerQPS), v, m.OursConfig, m.OursRecall, Num(m.OursQPS), ratio, cpu, ief, iv)
	}
}
