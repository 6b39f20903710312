package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServingBinaryDeps: the serving binary links neither the benchmark
// harness nor a plotting package (issue 37, item 1): `go list -deps` of
// this package names no gonum.org package and no package of bench/ (bench,
// bench/suites, bench/report, bench/gencorpus, bench/indexbench,
// bench/mutateeval, bench/hybrideval, ...), which are cmd/rlsearch-bench's.
func TestServingBinaryDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list -deps: %v (needs the go command)", err)
	}
	const module = "github.com/rlsearch/rlsearch/"
	deps := strings.Fields(string(out))
	if len(deps) < 100 {
		t.Fatalf("go list -deps listed %d packages: it did not list this binary's", len(deps))
	}
	for _, d := range deps {
		rel, ours := strings.CutPrefix(d, module)
		switch {
		case strings.HasPrefix(d, "gonum.org/"):
			t.Errorf("the serving binary imports %s (plotting belongs to cmd/rlsearch-bench)", d)
		case ours && (rel == "bench" || strings.HasPrefix(rel, "bench/")):
			t.Errorf("the serving binary imports %s (the harness belongs to cmd/rlsearch-bench)", d)
		}
	}
}
