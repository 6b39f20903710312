package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/bench"
)

func reps(vals ...float64) []bench.Rep {
	out := make([]bench.Rep, len(vals))
	for i, v := range vals {
		out[i] = bench.Rep{Throughput: v, P50ms: 1, P95ms: 2, P99ms: 3, Latencies: []float64{0.5, 1, 1.5, 2, 3}}
	}
	return out
}

// sample is a report with ours and a peer on flat (batch 1 and 64, with
// recall), a peer-less rewards row, and a skip.
func sample() *bench.Report {
	row := func(system string, batch int, vals ...float64) bench.Row {
		p := map[string]any{"data": "bge-base", "batch": batch, "threads": 1}
		r := bench.Row{Suite: "flat", System: system, Config: bench.Key(p), Params: p, Unit: "queries/s", Reps: reps(vals...)}
		for i := range r.Reps {
			r.Reps[i].Extra = map[string]float64{"recall@10": 0.9 + 0.01*float64(batch%7)}
		}
		return r
	}
	return &bench.Report{
		Options: bench.Options{Suites: []string{"flat", "rewards", "gpu"}, Reps: 3, MinTime: time.Second, Threads: []int{1}},
		Rows: []bench.Row{
			row(bench.Ours, 1, 100, 110, 90),
			row(bench.Ours, 64, 1000, 1100, 900),
			row("faiss-1.7.3-avx2", 1, 50, 55, 45),
			row("faiss-1.7.3-avx2", 64, 400, 500, 450),
			{Suite: "rewards", System: bench.Ours, Config: "reward=qa", Unit: "scores/s", Reps: reps(7)},
		},
		Skipped: []bench.Skip{{Suite: "gpu", Reason: "skipped: no GPU"}},
	}
}

func TestRatios(t *testing.T) {
	rs := Ratios(sample())
	if len(rs) != 2 {
		t.Fatalf("%d ratios, want 2 (one per flat config with a peer): %+v", len(rs), rs)
	}
	// medians: ours 100 and 1000, faiss 50 and 450
	if rs[0].Value != 2 || math.Abs(rs[1].Value-1000.0/450) > 1e-12 || rs[0].Peer != "faiss-1.7.3-avx2" {
		t.Errorf("ratios %+v, want 2 and 1000/450 against faiss", rs)
	}
	zero := sample()
	zero.Rows[2].Reps = reps(0)
	if v := Ratios(zero)[0].Value; !math.IsInf(v, 1) {
		t.Errorf("ratio against a peer at 0 = %v, want +Inf", v)
	}
}

func TestCPURatio(t *testing.T) {
	rep := sample()
	for i, cpu := range []time.Duration{20, 0, 60, 0} { // µs per 2 ops: ours 10, faiss 30 per op at batch 1
		for j := range rep.Rows[i].Reps {
			rep.Rows[i].Reps[j].CPU, rep.Rows[i].Reps[j].Ops = cpu*time.Microsecond, 2
		}
	}
	rs := Ratios(rep)
	if rs[0].CPU != 3 || rs[1].CPU != 0 {
		t.Errorf("CPU ratios %v, %v; want 3 (faiss 30 µs/op over ours 10) and 0 (not measured)", rs[0].CPU, rs[1].CPU)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU µs/op", "| 10.0 |", "| 30.0 |", "2.00× (CPU 3.00×) vs faiss-1.7.3-avx2", "| 2.22× |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report.md lacks %q:\n%s", want, b.String())
		}
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, sample(), map[string][]string{"flat": {"plots/flat-x.png"}}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## flat", "## rewards", "## gpu",
		"| rlsearch | `batch=1 data=bge-base threads=1` | queries/s | 100 | 90.0–110 (±10.0%) | 1.00 | 2.00 | 3.00 | 0.91 | 2.00× vs faiss-1.7.3-avx2 |",
		"| faiss-1.7.3-avx2 | `batch=1 data=bge-base threads=1` | queries/s | 50.0 |",
		"| 2.22× |",
		"suite: skipped: no GPU",
		"![plots/flat-x.png](plots/flat-x.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	// The rewards table has no peer column: no row there has a peer.
	rewards := md[strings.Index(md, "## rewards"):strings.Index(md, "## gpu")]
	if strings.Contains(rewards, "ours/peer") {
		t.Errorf("rewards table has a ratio column without a peer:\n%s", rewards)
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1234567: "1,234,567", -4321: "-4,321", 123.45: "123", 12.345: "12.3", 1.2345: "1.23", 0.012345: "0.0123"} {
		if got := Num(v); got != want {
			t.Errorf("Num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestMannWhitneyP(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		// Exact: the most extreme of C(6,3) = 20 arrangements, both tails: 2/20.
		{"3 vs 3 apart", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		// 2/C(8,4) = 2/70.
		{"4 vs 4 apart", []float64{5, 6, 7, 8}, []float64{1, 2, 3, 4}, 2.0 / 70},
		{"interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 0.7},
		{"empty", nil, []float64{1, 2}, 1},
		{"all equal (ties)", []float64{1, 1, 1}, []float64{1, 1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MannWhitneyP(tc.x, tc.y); math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("p = %v, want %v", got, tc.want)
			}
		})
	}
	// Ties: the normal approximation, monotone in the separation.
	near := MannWhitneyP([]float64{1, 2, 2, 3, 4, 5}, []float64{2, 3, 4, 5, 5, 6})
	far := MannWhitneyP([]float64{1, 1, 2, 2, 3, 3}, []float64{7, 7, 8, 8, 9, 9})
	if !(far < 0.01 && near > far && near <= 1) {
		t.Errorf("tied samples: p(far) %v, p(near) %v; want far < 0.01 < near", far, near)
	}
}

func TestCompare(t *testing.T) {
	old := sample()
	cur := sample()
	cur.Rows[0].Reps = reps(200, 210, 190, 205) // faster, ranges apart
	cur.Rows[1].Reps = reps(1050, 950, 1000)    // overlapping
	cur.Rows = cur.Rows[:4]                     // rewards dropped
	cur.Rows = append(cur.Rows, bench.Row{Suite: "hnsw", System: bench.Ours, Config: "ef=64", Unit: "queries/s", Reps: reps(1)})
	diffs, unmatched := Compare(old, cur)
	if len(diffs) != 4 {
		t.Fatalf("%d diffs, want 4", len(diffs))
	}
	d := diffs[0]
	if d.Overlap || math.Abs(d.Delta-1.025) > 1e-9 || d.Old.Median != 100 || d.New.Median != 202.5 {
		t.Errorf("first diff %+v, want ranges apart, +102.5%%", d)
	}
	if !diffs[1].Overlap {
		t.Errorf("second diff %+v, want overlapping ranges", diffs[1])
	}
	if len(unmatched) != 2 || !strings.HasPrefix(unmatched[0], "new only: hnsw") || !strings.HasPrefix(unmatched[1], "old only: rewards") {
		t.Errorf("unmatched %q", unmatched)
	}
	var b bytes.Buffer
	if err := WriteCompare(&b, diffs, unmatched); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"+102.5%", "(p=0.057 n=3+4)", " ~ ", "new only: hnsw"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare output lacks %q:\n%s", want, out)
		}
	}
}

func TestPlotsDecode(t *testing.T) {
	plots, err := Plots(sample())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range plots {
		names[p.Name] = true
		img, format, err := image.Decode(bytes.NewReader(p.PNG))
		if err != nil || format != "png" || img.Bounds().Dx() < 100 {
			t.Errorf("%s.png: %v, format %q", p.Name, err, format)
		}
		if err := wellFormedSVG(p.SVG); err != nil {
			t.Errorf("%s.svg: %v", p.Name, err)
		}
	}
	for _, want := range []string{"flat-throughput-batch", "flat-latency-cdf", "flat-recall-qps", "rewards-latency-cdf"} {
		if !names[want] {
			t.Errorf("no plot %s (have %v)", want, names)
		}
	}
}

// TestPlotsByData checks that a suite on two data sets gets one plot per
// set, each with our line kept ahead of the peers' when lines are cut.
func TestPlotsByData(t *testing.T) {
	rep := &bench.Report{Options: bench.Options{Suites: []string{"flat"}}}
	for _, data := range []string{"bge-base", "sift 10k"} {
		for _, sys := range []string{bench.Ours, "faiss-a", "faiss-b", "faiss-c", "faiss-d", "faiss-e", "faiss-f", "faiss-g", "faiss-h", "faiss-i", "faiss-j", "faiss-k", "faiss-l"} {
			for _, b := range []int{1, 64} {
				p := map[string]any{"data": data, "batch": b}
				rep.Rows = append(rep.Rows, bench.Row{Suite: "flat", System: sys, Config: bench.Key(p), Params: p, Unit: "queries/s",
					Reps: []bench.Rep{{Throughput: float64(100 * b), Ops: 1, Elapsed: time.Second}}})
			}
		}
	}
	plots, err := Plots(rep)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range plots {
		names = append(names, p.Name)
		if !bytes.Contains(p.SVG, []byte(">"+bench.Ours)) {
			t.Errorf("%s: no line of ours in the legend (13 systems, 12 lines)", p.Name)
		}
	}
	for _, want := range []string{"flat-throughput-batch-bge-base", "flat-throughput-batch-sift_10k"} {
		if !slices.Contains(names, want) {
			t.Errorf("no plot %s (have %v)", want, names)
		}
	}
}

// wellFormedSVG parses the whole document as XML and checks the root.
func wellFormedSVG(b []byte) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		return errors.New("root element " + root + ", want svg")
	}
	return nil
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	files, err := WriteDir(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]string{files.JSON, files.Markdown}, files.Plots...) {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, files.Markdown))
	for _, p := range files.Plots {
		if strings.HasSuffix(p, ".png") && !strings.Contains(string(md), "]("+p+")") {
			t.Errorf("report.md does not embed %s", p)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestLogTicks(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(150, 2500) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got, want := strings.Join(labels, " "), "200 500 1,000 2,000"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
}

// TestEqualRecall: each peer row is matched with the fastest row of ours
// (per variant) whose recall is at least the peer's, whatever its ef; a
// recall ours never reaches is reported as such; another configuration that
// only starts alike (threads=24 against threads=2) is not a variant.
func TestEqualRecall(t *testing.T) {
	row := func(system, config string, qps, recall, cpuUs float64) bench.Row {
		r := bench.Row{Suite: "hnsw", System: system, Config: config, Unit: "queries/s", Reps: reps(qps)}
		r.Reps[0].Extra = map[string]float64{RecallKey: recall}
		r.Reps[0].Ops, r.Reps[0].CPU = 1000, time.Duration(cpuUs*1000)*time.Microsecond/1000
		return r
	}
	const base = "sift n=10 M=16 ef=%d top10 threads=2"
	cfg := func(ef int, suffix string) string { return fmt.Sprintf(base, ef) + suffix }
	rep := &bench.Report{Options: bench.Options{Suites: []string{"hnsw"}}, Rows: []bench.Row{
		row(bench.Ours, cfg(16, ""), 1000, 0.90, 1),
		row(bench.Ours, cfg(64, ""), 400, 0.99, 2.5),
		row(bench.Ours, cfg(128, ""), 200, 0.995, 5),
		row(bench.Ours, cfg(16, " compressed"), 1200, 0.89, 0.8),
		row(bench.Ours, cfg(64, " compressed"), 500, 0.98, 2),
		row(bench.Ours, "sift n=10 M=16 ef=64 top10 threads=24", 9999, 1, 1),
		row("hnswlib", cfg(16, ""), 500, 0.95, 2),
		row("hnswlib", cfg(64, ""), 100, 0.999, 10),
		row("faiss", cfg(16, ""), 800, 0.85, 3),
	}}
	got := EqualRecall(rep)
	type want struct {
		peerEf  string
		variant string
		found   bool
		ours    string
		value   float64
	}
	wants := []want{
		{"ef=16", "", true, cfg(64, ""), 400.0 / 500},
		{"ef=16", " compressed", true, cfg(64, " compressed"), 500.0 / 500},
		{"ef=64", "", false, cfg(128, ""), 0},
		{"ef=64", " compressed", false, cfg(64, " compressed"), 0},
		{"ef=16", "", true, cfg(16, ""), 1000.0 / 800},
		{"ef=16", " compressed", true, cfg(16, " compressed"), 1200.0 / 800},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d matches, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if !strings.Contains(g.PeerConfig, w.peerEf) || g.Variant != w.variant || g.Found != w.found || g.OursConfig != w.ours || math.Abs(g.Value-w.value) > 1e-12 {
			t.Errorf("match %d = %+v, want %+v", i, g, w)
		}
	}
	// Interpolated: log(q/s) linear in recall between ef 16 and 64.
	interp := func(q0, r0, q1, r1, r float64) float64 {
		return math.Exp(math.Log(q0) + (r-r0)/(r1-r0)*(math.Log(q1)-math.Log(q0)))
	}
	for i, w := range []struct {
		from, to int
		value    float64
	}{
		{16, 64, interp(1000, 0.90, 400, 0.99, 0.95) / 500},
		{16, 64, interp(1200, 0.89, 500, 0.98, 0.95) / 500},
		{0, 0, 0}, {0, 0, 0},
		{16, 16, 1000.0 / 800},
		{16, 16, 1200.0 / 800},
	} {
		if g := got[i]; g.InterpFrom != w.from || g.InterpTo != w.to || math.Abs(g.InterpValue-w.value) > 1e-9 {
			t.Errorf("match %d interpolated ef %d–%d value %v, want %d–%d %v", i, g.InterpFrom, g.InterpTo, g.InterpValue, w.from, w.to, w.value)
		}
	}
	if v := got[0].InterpValue; v <= got[0].Value {
		t.Errorf("interpolated %v not above measured %v", v, got[0].Value)
	}
	if c := got[0].CPU; math.Abs(c-2.0/2.5) > 1e-9 {
		t.Errorf("CPU peer/ours %v, want 0.8", c)
	}
	var b strings.Builder
	writeEqualRecall(&b, got, "hnsw")
	if s := b.String(); !strings.Contains(s, "not reached") || !strings.Contains(s, "| 0.80× |") {
		t.Errorf("equal-recall table:\n%s", s)
	}
}
