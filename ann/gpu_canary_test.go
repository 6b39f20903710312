package ann

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

// canaryVectors is n unit vectors of dim (fp16 or int8 storage) in which
// the row after the first canary query row is a copy of it: an exact tie
// the GPU must break by ascending row. It returns the shard and that row.
func canaryVectors(t *testing.T, n, dim, refRows int, dt DType) (*Flat, int) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, uint64(n)))
	v := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		row := v[i*dim : (i+1)*dim]
		var ss float64
		for j := range row {
			row[j] = float32(r.NormFloat64())
			ss += float64(row[j]) * float64(row[j])
		}
		for j := range row {
			row[j] = float32(float64(row[j]) / math.Sqrt(ss))
		}
	}
	fr := canaryQueryRows(canaryIntervals(n, refRows))[0]
	copy(v[(fr+1)*dim:(fr+2)*dim], v[fr*dim:(fr+1)*dim])
	f, err := NewFlat(v, dim, dt)
	if err != nil {
		t.Fatal(err)
	}
	return f, fr
}

// TestGPUCanaryRef runs the search canary on reference devices (the GPU
// index's pipelines with the plain-Go kernel references): every clean
// configuration passes, whole-shard and sampled references alike.
func TestGPUCanaryRef(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		dt      DType
		cfg     GPUConfig
		refRows int
	}{
		{"fp16/1dev", 3000, FP16, GPUConfig{refDevices: 1}, CanaryRefRows},
		{"fp16/3dev/tiled", 3000, FP16, GPUConfig{refDevices: 3, Path: GPUPathTiled}, CanaryRefRows},
		{"fp16/segments", 2500, FP16, GPUConfig{refDevices: 2, Path: GPUPathSegments, MaxBatch: 32}, CanaryRefRows},
		{"fp32/sampled", 5000, FP32, GPUConfig{refDevices: 2, canaryRows: 1024}, 1024},
		{"int8", 3000, INT8, GPUConfig{refDevices: 2, Int8: true}, CanaryRefRows},
		{"int8/sampled", 5000, INT8, GPUConfig{refDevices: 1, Int8: true, canaryRows: 2048}, 2048},
		{"small", 40, FP16, GPUConfig{refDevices: 1}, CanaryRefRows},
		{"dim31", 500, FP16, GPUConfig{refDevices: 2}, CanaryRefRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dim := 64
			if strings.HasPrefix(tc.name, "dim31") {
				dim = 31
			}
			f, _ := canaryVectors(t, tc.n, dim, tc.refRows, tc.dt)
			g, err := NewGPU(f, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			rep, err := g.Canary(context.Background(), f.Vectors)
			if err != nil {
				t.Fatalf("clean device failed the canary: %v", err)
			}
			if !rep.Ran || !rep.Passed || rep.Inputs != 128 || rep.Bar <= 0 || rep.Value > rep.Bar {
				t.Fatalf("report %+v: want ran, passed, 128 inputs, 0 < value ≤ bar", rep)
			}
			if tc.refRows < tc.n && !strings.Contains(rep.Reference, fmt.Sprintf("%d of %d rows", tc.refRows, tc.n)) {
				t.Errorf("reference %q does not say it is sampled", rep.Reference)
			}
			t.Logf("%s", rep)
		})
	}
}

// TestGPUCanaryFaults: a faulty device (a wrong score, a dropped row, a
// swapped tie) fails the canary with ErrGPUCanary naming the query. (A
// swap inside one device's list of several is sorted away by the host
// merge, so there the hits are right and the canary passes.)
func TestGPUCanaryFaults(t *testing.T) {
	for _, dt := range []DType{FP16, INT8} {
		for _, fault := range []string{faultWrong, faultDrop, faultSwap} {
			for _, devs := range []int{1, 3} {
				t.Run(fmt.Sprintf("%v/%s/devices=%d", dt, fault, devs), func(t *testing.T) {
					f, fr := canaryVectors(t, 3000, 64, CanaryRefRows, dt)
					g, err := NewGPU(f, GPUConfig{refDevices: devs, Int8: dt == INT8, fault: fault, faultRow: fr})
					if err != nil {
						t.Fatal(err)
					}
					defer g.Close()
					rep, err := g.Canary(context.Background(), f.Vectors)
					if fault == faultSwap && devs > 1 {
						// The host merge of the devices' lists sorts them
						// again (mergeDeviceParts): the swap never reaches the
						// hits, and the canary must see correct hits.
						if err != nil {
							t.Fatalf("swap under a host merge: %v", err)
						}
						return
					}
					if !errors.Is(err, ErrGPUCanary) {
						t.Fatalf("fault %s: err %v, want ErrGPUCanary", fault, err)
					}
					if rep.Passed || rep.Failure == "" || !strings.Contains(err.Error(), "query ") || !strings.Contains(err.Error(), " k ") {
						t.Fatalf("fault %s: report %+v, err %v: want a failure naming the query and k", fault, rep, err)
					}
					t.Logf("%v", err)
				})
			}
		}
	}
}

// TestGPUCanaryOpen: Open runs the canary before serving from the GPU;
// "auto" falls back to the CPU with one loud line and the reason, "gpu"
// refuses naming the query, SkipGPUCanary skips it.
func TestGPUCanaryOpen(t *testing.T) {
	f, fr := canaryVectors(t, 3000, 64, CanaryRefRows, FP16)
	ctx := context.Background()
	var lines []string
	logf := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	o, err := Open(ctx, Config{Flat: f, Backend: BackendGPU, GPU: GPUConfig{refDevices: 1}, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	if o.Backend != BackendGPU || !o.Canary.Passed || !strings.Contains(o.Reason, "search canary passed") {
		t.Fatalf("clean: backend %s, canary %+v, reason %q", o.Backend, o.Canary, o.Reason)
	}
	o.Close()

	bad := GPUConfig{refDevices: 1, fault: faultDrop, faultRow: fr}
	if _, err := Open(ctx, Config{Flat: f, Backend: BackendGPU, GPU: bad}); !errors.Is(err, ErrGPUCanary) || !strings.Contains(err.Error(), fmt.Sprintf("query 0 (vector file row %d)", fr)) {
		t.Fatalf("gpu with a faulty device: err %v, want ErrGPUCanary naming query 0 (vector file row %d)", err, fr)
	}

	lines = nil
	o, err = Open(ctx, Config{Flat: f, Backend: BackendAuto, GPU: bad, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	loud := 0
	for _, l := range lines {
		if strings.Contains(l, "GPU SEARCH CANARY FAILED") {
			loud++
		}
	}
	if o.Backend != BackendFlat || o.Canary.Passed || !o.Canary.Ran || o.Canary.Failure == "" || !strings.Contains(o.Reason, "GPU search canary failed (query 0") || loud != 1 {
		t.Fatalf("auto with a faulty device: backend %s, canary %+v, reason %q, %d loud lines in %q", o.Backend, o.Canary, o.Reason, loud, lines)
	}

	o, err = Open(ctx, Config{Flat: f, Backend: BackendGPU, GPU: bad, SkipGPUCanary: true})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Backend != BackendGPU || o.Canary.Ran || !strings.Contains(o.Canary.Skipped, "--gpu-canary=false") || !strings.Contains(o.Reason, "search canary skipped") {
		t.Fatalf("skipped: backend %s, canary %+v, reason %q", o.Backend, o.Canary, o.Reason)
	}
}

// TestGPUCanaryEmpty: an empty shard has nothing to compare; the canary
// says so instead of failing.
func TestGPUCanaryEmpty(t *testing.T) {
	f, err := NewFlat(nil, 16, FP16)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := SearchCanary(context.Background(), f, f.Vectors)
	if err != nil || rep.Ran || !strings.Contains(rep.Skipped, "empty") {
		t.Fatalf("empty shard: %+v, %v", rep, err)
	}
}

// TestSearchCanaryFlat: the canary over the CPU exact index itself passes
// (what bench/gpu's dry run runs), and over an approximate answer fails.
func TestSearchCanaryFlat(t *testing.T) {
	f, _ := canaryVectors(t, 2000, 48, CanaryRefRows, FP16)
	rep, err := SearchCanary(context.Background(), f, f.Vectors)
	if err != nil || !rep.Passed {
		t.Fatalf("Flat against itself: %+v, %v", rep, err)
	}
	if _, err := SearchCanary(context.Background(), lossy{f}, f.Vectors); !errors.Is(err, ErrGPUCanary) {
		t.Fatalf("an index that loses its best hit: %v, want ErrGPUCanary", err)
	}
}

// lossy answers Flat's hits without the first.
type lossy struct{ *Flat }

func (l lossy) Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error) {
	hits, err := l.Flat.Search(ctx, q, k+1)
	for i := range hits {
		hits[i] = hits[i][1:]
	}
	return hits, err
}

// TestGPUCanaryDevice runs the search canary on the real GPU over a
// 100,003 × 768 shard (sampled reference: more rows than CanaryRefRows),
// fp16 and int8: the check bench/gpu/run.sh makes on each lent device.
// It skips without a GPU and fails under REQUIRE_GPU=1.
func TestGPUCanaryDevice(t *testing.T) {
	if _, err := cuda.Devices(); err != nil {
		cudatest.Skip(t, err)
	}
	for _, dt := range []DType{FP16, INT8} {
		f, _ := canaryVectors(t, 100003, 768, CanaryRefRows, dt)
		g, err := NewGPU(f, GPUConfig{Int8: dt == INT8, Logf: t.Logf})
		if err != nil {
			cudatest.Skip(t, err)
		}
		rep, err := g.Canary(context.Background(), f.Vectors)
		g.Close()
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		t.Logf("%v: %s", dt, rep)
	}
}
