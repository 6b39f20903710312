package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestMain lets the test binary stand in for gpubench (GPUBENCH_MAIN=1),
// so that TestInterleaveDryRun drives this package's code without a build.
func TestMain(m *testing.M) {
	if os.Getenv("GPUBENCH_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func requireNumpy(t *testing.T) {
	t.Helper()
	if err := exec.Command(testutil.Python, "-c", "import numpy").Run(); err != nil {
		testutil.RequireNative(t, "python3-numpy importable by "+testutil.Python)
	}
}

// TestSummaryReproducesTable: summary.py, given the 2026-11-30 run's
// measurements (testdata, rebuilt from its table), prints that table
// exactly as committed in results/2026-11-30-h200.md.
func TestSummaryReproducesTable(t *testing.T) {
	if _, err := os.Stat(testutil.Python); err != nil {
		testutil.RequireNative(t, testutil.Python)
	}
	out, err := exec.Command(testutil.Python, "../summary.py", "--table-only",
		"../testdata/2026-11-30-rlsearch.jsonl", "../testdata/2026-11-30-torch.jsonl").CombinedOutput()
	if err != nil {
		t.Fatalf("summary.py: %v\n%s", err, out)
	}
	md, err := os.ReadFile("../results/2026-11-30-h200.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(md), "| n | batch | rlsearch q/s")
	if i < 0 {
		t.Fatal("results/2026-11-30-h200.md has no throughput table")
	}
	want := string(md[i:])
	want = want[:strings.Index(want, "\n\n")+1]
	if string(out) != want {
		t.Fatalf("summary.py printed\n%s\nthe committed table is\n%s", out, want)
	}
}

// runInterleave runs interleave.py with this test binary as gpubench -cpu
// and torch_baseline.py's numpy stand-in, with args; the path of its
// JSON lines.
func runInterleave(t *testing.T, args ...string) string {
	t.Helper()
	requireNumpy(t)
	out := filepath.Join(t.TempDir(), "bench.jsonl")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testutil.Python, append([]string{"../interleave.py", "--ours", "env GPUBENCH_MAIN=1 " + self + " -cpu",
		"--torch", testutil.Python + " ../torch_baseline.py --serve --numpy", "--out", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("interleave.py: %v\n%s", err, b)
	}
	return out
}

// TestInterleaveDryRun runs interleave.py with this binary as gpubench -cpu
// and torch_baseline.py's numpy stand-in over a small corpus, then
// summary.py: every (impl, path, batch) is timed, the /retrieve benchmark
// answers, and the summary's comparison table has a row per batch.
func TestInterleaveDryRun(t *testing.T) {
	out := runInterleave(t, "--sizes", "3000", "--dim", "64", "--batches", "1,5", "--paths", "auto,tiled,int8", "--reps", "3",
		"--min-ms", "1", "--http-seconds", "0.3", "--http-concurrency", "4", "--copy-mib", "1")
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		kind, _ := r["kind"].(string)
		if kind == "error" {
			t.Errorf("error row: %v", r)
		}
		if kind == "time" {
			if reps, _ := r["reps"].(float64); reps != 3 {
				t.Errorf("%v: %v repetitions, want 3", r["impl"], reps)
			}
			kind += " " + r["impl"].(string) + " " + r["path"].(string)
			// Shard bytes read per call: 1 per value for int8, 2 otherwise.
			es := 2.0
			if r["path"] == "int8" {
				es = 1
			}
			if got := r["shard_gbps"].(float64) * r["latency_ms"].(float64) * 1e6; math.Abs(got-es*3000*64) > 1e-6*es*3000*64 {
				t.Errorf("%s: shard_gbps × latency = %v bytes, want %v", kind, got, es*3000*64)
			}
		}
		seen[kind]++
	}
	for k, want := range map[string]int{"time rlsearch auto": 2, "time rlsearch tiled": 2, "time rlsearch int8": 2, "time torch ": 2, "load": 2, "copy": 2, "http": 1, "canary": 1} {
		if seen[k] != want {
			t.Errorf("%d %q rows, want %d (all: %v)", seen[k], k, want, seen)
		}
	}
	sum, err := exec.Command(testutil.Python, "../summary.py", out).CombinedOutput()
	if err != nil {
		t.Fatalf("summary.py: %v\n%s", err, sum)
	}
	for _, want := range []string{"| 3,000 | 1 |", "| 3,000 | 5 |", "| 3,000 | 5 | tiled |", "| 3,000 | 5 | int8 |", "int8 shard on the GPU", "/retrieve (package server", "GPU search canary", "n=3,000: search canary passed", "n=3,000 int8: search canary passed"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

// TestInterleaveInt8LoadFails: when ours cannot build the int8 index (here
// dim 40, not a multiple of 16, refused as on the GPU), interleave.py
// records one error row for the path int8 and still times the fp16 path
// against torch at that size.
func TestInterleaveInt8LoadFails(t *testing.T) {
	out := runInterleave(t, "--sizes", "2000", "--dim", "40", "--batches", "1", "--paths", "auto,int8", "--reps", "1",
		"--min-ms", "1", "--http-n", "0", "--copy-mib", "1")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		key, _ := r["kind"].(string)
		if key == "time" || key == "error" {
			key += " " + r["impl"].(string) + " " + fmt.Sprint(r["path"])
		}
		seen[key]++
	}
	for k, want := range map[string]int{"time rlsearch auto": 1, "time torch ": 1, "error rlsearch int8": 1, "time rlsearch int8": 0} {
		if seen[k] != want {
			t.Errorf("%d %q rows, want %d (all: %v)", seen[k], k, want, seen)
		}
	}
}
