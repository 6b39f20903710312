package report

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rlsearch/rlsearch/bench"
)

// Plot is one drawn figure: its base file name (without extension) and the
// encoded images.
type Plot struct {
	Suite, Name string
	PNG, SVG    []byte
}

// maxLines bounds the series of one plot so that the legend stays legible
// (20: three graph variants of ours and two peers at two batch sizes and
// two thread counts).
const maxLines = 20

// Plots draws, for every suite of rep that has the data:
//   - "<suite>-throughput-batch": median throughput against Params["batch"]
//     (log x), one line per system and configuration without the batch;
//   - "<suite>-latency-cdf": the CDF of the sampled per-call latencies
//     (Rep.Latencies, all repetitions) of each row, log x;
//   - "<suite>-recall-qps": median queries/s against median recall@10, one
//     line per system and configuration without ef (ours and every peer on
//     the same axes).
//
// Each as PNG and SVG, 8×5 inches.
func Plots(rep *bench.Report) ([]Plot, error) {
	var out []Plot
	for _, s := range suites(rep) {
		var rows []bench.Row
		for _, r := range rep.Rows {
			if r.Suite == s {
				rows = append(rows, r)
			}
		}
		for _, g := range byData(rows) {
			for _, mk := range []func(string, []bench.Row) (*plot.Plot, string, error){throughputPlot, cdfPlot, recallPlot} {
				p, name, err := mk(s, g.rows)
				if err != nil {
					return nil, fmt.Errorf("plot %s: %w", s, err)
				}
				if p == nil {
					continue
				}
				if g.data != "" {
					name += "-" + g.data
					p.Title.Text += " (" + g.data + ")"
				}
				pl := Plot{Suite: s, Name: name}
				for _, f := range []string{"png", "svg"} {
					wt, err := p.WriterTo(8*vg.Inch, 5*vg.Inch, f)
					if err != nil {
						return nil, fmt.Errorf("plot %s %s: %w", name, f, err)
					}
					var buf bytes.Buffer
					if _, err := wt.WriteTo(&buf); err != nil {
						return nil, fmt.Errorf("plot %s %s: %w", name, f, err)
					}
					if f == "png" {
						pl.PNG = buf.Bytes()
					} else {
						pl.SVG = buf.Bytes()
					}
				}
				out = append(out, pl)
			}
		}
	}
	return out, nil
}

// dataGroup is the rows of one data set of a suite ("" = all rows).
type dataGroup struct {
	data string
	rows []bench.Row
}

// byData splits a suite's rows by Params["data"] when they hold more than
// one data set (flat and hnsw on three vector sets with two faiss builds
// are too many lines for one legible plot), in first-seen order; file-name
// unsafe characters of the data name become '_'.
func byData(rows []bench.Row) []dataGroup {
	var out []dataGroup
	idx := map[string]int{}
	for _, r := range rows {
		d, _ := r.Params["data"].(string)
		i, ok := idx[d]
		if !ok {
			i = len(out)
			idx[d] = i
			out = append(out, dataGroup{data: d})
		}
		out[i].rows = append(out[i].rows, r)
	}
	if len(out) <= 1 {
		return []dataGroup{{rows: rows}}
	}
	for i := range out {
		out[i].data = strings.Map(func(c rune) rune {
			if c == '-' || c == '.' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') {
				return c
			}
			return '_'
		}, out[i].data)
	}
	return out
}

// WritePlots writes every plot as dir/<name>.png and .svg (atomically) and
// returns the PNG paths relative to dir's parent, by suite, for report.md.
func WritePlots(dir string, plots []Plot) (map[string][]string, error) {
	byS := map[string][]string{}
	for _, p := range plots {
		for ext, data := range map[string][]byte{".png": p.PNG, ".svg": p.SVG} {
			if err := bench.WriteFileAtomic(filepath.Join(dir, p.Name+ext), data); err != nil {
				return nil, err
			}
		}
		byS[p.Suite] = append(byS[p.Suite], filepath.Join(filepath.Base(dir), p.Name+".png"))
	}
	return byS, nil
}

// num reads a Params value as a number (int in memory, float64 after JSON,
// or a numeric string).
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(7)
	p.Add(plotter.NewGrid())
	return p
}

type series struct {
	name     string
	config   string // the row's Config, to tell apart rows of equal labels
	xys      plotter.XYs
	noPoints bool // a line only (CDFs have many points)
}

func addSeries(p *plot.Plot, ss []series) error {
	// Ours first, so that a plot cut at maxLines never loses our lines;
	// series whose labels coincide (rows that differ in Config only) get
	// their Config appended.
	slices.SortStableFunc(ss, func(a, b series) int {
		ao, bo := strings.HasPrefix(a.name, bench.Ours+" ") || a.name == bench.Ours, strings.HasPrefix(b.name, bench.Ours+" ") || b.name == bench.Ours
		if ao != bo {
			if ao {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	seen := map[string]int{}
	for _, s := range ss {
		seen[s.name]++
	}
	for i := range ss {
		if seen[ss[i].name] > 1 && ss[i].config != "" {
			ss[i].name += " (" + ss[i].config + ")"
		}
	}
	if len(ss) > maxLines {
		ss = ss[:maxLines]
	}
	for i, s := range ss {
		slices.SortFunc(s.xys, func(a, b plotter.XY) int {
			if a.X != b.X {
				return cmpF(a.X, b.X)
			}
			return cmpF(a.Y, b.Y)
		})
		if s.noPoints {
			l, err := plotter.NewLine(s.xys)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(i)
			l.Dashes = plotutil.Dashes(i / 7)
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(s.name, l)
			continue
		}
		l, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i / 7)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	return nil
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// varying returns the params keys whose values differ between rows (or
// that some rows lack): the ones a legend needs.
func varying(rows []bench.Row) map[string]bool {
	vals := map[string]map[string]bool{}
	count := map[string]int{}
	for _, r := range rows {
		for k, v := range r.Params {
			if vals[k] == nil {
				vals[k] = map[string]bool{}
			}
			vals[k][fmt.Sprint(v)] = true
			count[k]++
		}
	}
	out := map[string]bool{}
	for k, vs := range vals {
		if len(vs) > 1 || count[k] < len(rows) {
			out[k] = true
		}
	}
	return out
}

// label names a series: the system and the params in keep that the row
// has, minus drop and "ours_only" (a width run for ours alone belongs to
// the series of the others; bench/suites hnsw.ours_ef), or the whole config
// when the row has no params.
func label(r bench.Row, keep map[string]bool, drop ...string) string {
	if len(r.Params) == 0 {
		return r.System + " " + r.Config
	}
	m := map[string]any{}
	for k, v := range r.Params {
		if keep[k] && k != "ours_only" && !slices.Contains(drop, k) {
			m[k] = v
		}
	}
	if len(m) == 0 {
		return r.System
	}
	return r.System + " " + bench.Key(m)
}

func throughputPlot(suite string, rows []bench.Row) (*plot.Plot, string, error) {
	groups := map[string]*series{}
	var order []string
	unit := ""
	keep := varying(rows)
	for _, r := range rows {
		b, ok := num(r.Params["batch"])
		v := r.ThroughputStats().Median
		if !ok || b <= 0 || v <= 0 {
			continue
		}
		unit = r.Unit
		name := label(r, keep, "batch")
		if groups[name] == nil {
			groups[name] = &series{name: name}
			order = append(order, name)
		}
		groups[name].xys = append(groups[name].xys, plotter.XY{X: b, Y: v})
	}
	var ss []series
	for _, n := range order {
		if len(groups[n].xys) >= 2 {
			ss = append(ss, *groups[n])
		}
	}
	if len(ss) == 0 {
		return nil, "", nil
	}
	p := newPlot(suite+": throughput against batch size", "batch size", unit)
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	return p, suite + "-throughput-batch", addSeries(p, ss)
}

func cdfPlot(suite string, rows []bench.Row) (*plot.Plot, string, error) {
	var ss []series
	keep := varying(rows)
	for _, r := range rows {
		lat := r.AllLatencies()
		lat = slices.DeleteFunc(lat, func(v float64) bool { return v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) })
		if len(lat) < 2 {
			continue
		}
		xys := make(plotter.XYs, len(lat))
		for i, v := range lat {
			xys[i] = plotter.XY{X: v, Y: float64(i+1) / float64(len(lat))}
		}
		ss = append(ss, series{name: label(r, keep), config: r.Config, xys: xys, noPoints: true})
	}
	if len(ss) == 0 {
		return nil, "", nil
	}
	p := newPlot(suite+": latency CDF (per call)", "latency (ms)", "fraction of calls ≤ x")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Left = false
	p.Legend.Top = false
	return p, suite + "-latency-cdf", addSeries(p, ss)
}

// RecallKey is the Extra key of recall plotted against queries/s.
const RecallKey = "recall@10"

func recallPlot(suite string, rows []bench.Row) (*plot.Plot, string, error) {
	groups := map[string]*series{}
	var order []string
	keep := varying(rows)
	for _, r := range rows {
		rc, ok := r.ExtraMedian(RecallKey)
		v := r.ThroughputStats().Median
		if !ok || v <= 0 {
			continue
		}
		name := label(r, keep, "ef", "efs", "ef_search")
		if groups[name] == nil {
			groups[name] = &series{name: name}
			order = append(order, name)
		}
		groups[name].xys = append(groups[name].xys, plotter.XY{X: rc, Y: v})
	}
	if len(order) == 0 {
		return nil, "", nil
	}
	var ss []series
	for _, n := range order {
		ss = append(ss, *groups[n])
	}
	p := newPlot(suite+": queries/s against recall@10", "recall@10", "queries/s")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Legend.Left = true
	p.Legend.Top = false
	return p, suite + "-recall-qps", addSeries(p, ss)
}

// logTicks labels 1, 2 and 5 times every power of ten within the range
// (gonum's LogTicks labels powers of ten only, often one or none on a
// throughput axis), with unlabelled minor ticks at the other integers.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return plot.LogTicks{Prec: -1}.Ticks(math.Max(lo, 1e-12), math.Max(hi, 1e-12))
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		p := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
				if v >= 1000 {
					t.Label = Num(v)
				}
			}
			ts = append(ts, t)
		}
	}
	return ts
}
