package suites

import (
	"context"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/peers"
	"github.com/rlsearch/rlsearch/bench/report"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestFlatFaissRatio runs the flat suite with its registered faiss peer on a
// tiny generated set and checks that every row of ours gets a faiss row of
// the same Config from the same run, so the report prints ours/faiss.
func TestFlatFaissRatio(t *testing.T) {
	if out, err := exec.Command(peers.Python, "-c", "import faiss, numpy").CombinedOutput(); err != nil {
		t.Skipf("faiss is not installed for %s (make bench-setup installs it): %v %s", peers.Python, err, out)
	}
	rep, err := bench.Run(context.Background(), bench.Options{Suites: []string{"flat"}, Reps: 1, Quick: true, MinTime: time.Millisecond,
		Data: testutil.DataDir(t), Work: t.TempDir(), Root: testutil.RepoRoot(t), Threads: []int{1}, Peers: true,
		Set: map[string]string{"flat.data": "uniform-300x8", "flat.batch": "1,4"}}, All())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skipped {
		t.Errorf("skipped: %+v", s)
	}
	var ours, debian int
	for _, r := range rep.Rows {
		switch {
		case r.System == bench.Ours:
			ours++
			if want := peers.FlatConfig("uniform-300x8", 300, 8, 10, pnum(r.Params, "batch"), 1); r.Config != want {
				t.Errorf("our config %q, want the peer's key %q", r.Config, want)
			}
		case strings.HasPrefix(r.System, "faiss-") && strings.HasSuffix(r.System, "-debian"):
			debian++
		case strings.HasPrefix(r.System, "faiss-") && strings.HasSuffix(r.System, "-avx2"):
		default:
			t.Errorf("unexpected row of %q", r.System)
		}
	}
	if ours != 2 || debian != 2 {
		t.Fatalf("%d rows of ours and %d of Debian's faiss, want 2 each (batch 1 and 4)", ours, debian)
	}
	got := map[string]int{}
	for _, ra := range report.Ratios(rep) {
		if ra.Suite != "flat" || ra.Value <= 0 || math.IsInf(ra.Value, 0) || math.IsNaN(ra.Value) {
			t.Errorf("ratio %+v: want a positive finite ours/faiss", ra)
		}
		if strings.HasSuffix(ra.Peer, "-debian") {
			got[ra.Config]++
		}
	}
	if len(got) != 2 {
		t.Errorf("ratios against Debian's faiss for %d configs, want 2: %v", len(got), got)
	}
	var md strings.Builder
	if err := report.WriteMarkdown(&md, rep, nil); err != nil {
		t.Fatal(err)
	}
	ratioRows := 0
	for _, line := range strings.Split(md.String(), "\n") {
		if strings.HasPrefix(line, "| "+bench.Ours+" |") && strings.Contains(line, "×") {
			ratioRows++
		}
	}
	if ratioRows != 2 {
		t.Errorf("report.md has %d rows of ours with an ours/peer ratio, want 2:\n%s", ratioRows, md.String())
	}
}
