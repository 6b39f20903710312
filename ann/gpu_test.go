package ann

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/kernels"
)

// gpuTestVecs returns n×dim vectors. quantized: values in {±1, ±0.5, 0}, so
// every inner product with a quantized query is exact in fp32 whatever the
// summation order and exact ties are common; else uniform in [-1, 1].
func gpuTestVecs(r *rand.Rand, n, dim int, quantized bool) []float32 {
	v := make([]float32, n*dim)
	for i := range v {
		if quantized {
			v[i] = float32(r.IntN(5)-2) / 2
		} else {
			v[i] = float32(r.Float64()*2 - 1)
		}
	}
	return v
}

// writeGPUTestVectorFile writes vecs as an fp16 shard with small blocks, so that
// the streaming upload crosses block and device boundaries.
func writeGPUTestVectorFile(t *testing.T, vecs []float32, dim int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dense.shard")
	w, err := CreateVectorFile(path, Header{DType: FP16, Dim: dim, BlockRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(vecs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// compareHits checks got against the exact oracle's want for one query.
// exact: ids and scores must be identical. Otherwise scores must agree
// within tol, and where ids differ the returned row's true score (from
// oracle vectors) must be within tol of the oracle's score at that rank.
func compareHits(t *testing.T, what string, got, want []rlsearch.Hit, exact bool, tol float64, oracle *Flat, q []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d hits, oracle %d", what, len(got), len(want))
	}
	seen := map[int32]bool{}
	for i := range got {
		g, w := got[i], want[i]
		if seen[g.Row] {
			t.Fatalf("%s: row %d returned twice", what, g.Row)
		}
		seen[g.Row] = true
		if i > 0 && rlsearch.Less(got[i], got[i-1]) {
			t.Fatalf("%s: rank %d (%v) ranks above rank %d (%v)", what, i, got[i], i-1, got[i-1])
		}
		if exact {
			if g.Row != w.Row || g.Score != w.Score {
				t.Fatalf("%s: rank %d = %+v, oracle %+v", what, i, g, w)
			}
			continue
		}
		if math.Abs(float64(g.Score-w.Score)) > tol {
			t.Fatalf("%s: rank %d score %v, oracle %v (tol %g)", what, i, g.Score, w.Score, tol)
		}
		if g.Row != w.Row {
			v := oracle.Vector(int(g.Row))
			var s float64
			for j := range v {
				s += float64(v[j]) * float64(q[j])
			}
			if math.Abs(s-float64(w.Score)) > tol {
				t.Fatalf("%s: rank %d row %d (true score %v), oracle row %d score %v", what, i, g.Row, s, w.Row, w.Score)
			}
		}
	}
}

// issueKs are the k the GPU tests compare at (issue 21): both sides of
// kernels.KMax (2,048, the largest k selected on the GPU) and of 256 (a
// power of two in the merge's bitonic sort).
var issueKs = []int{1, 10, 100, 256, 257, 1024, 2048, 2049, 5000}

// checkPrefix256: the first 256 hits of top-257 equal top-256 (the same
// order, the same scores), for every query.
func checkPrefix256(t *testing.T, what string, k256, k257 [][]rlsearch.Hit) {
	t.Helper()
	for qi := range k256 {
		n := min(256, len(k257[qi]))
		if len(k256[qi]) != n {
			t.Fatalf("%s q%d: top-256 has %d hits, top-257 %d", what, qi, len(k256[qi]), len(k257[qi]))
		}
		for i := 0; i < n; i++ {
			if k256[qi][i] != k257[qi][i] {
				t.Fatalf("%s q%d rank %d: top-256 %+v, top-257 %+v", what, qi, i, k256[qi][i], k257[qi][i])
			}
		}
	}
}

// TestGPUTilingMergeRef runs the GPU index's pipelines (threshold fused and
// tiled, segments), tiling, merges and multi-device code with the plain-Go
// kernel references in place of the GPU and compares with the exact flat
// oracle at the issue's sizes and k. Quantized data makes every score
// exact, so ids (ties by row) must match exactly; one random-valued pass
// per size checks the tolerant path.
func TestGPUTilingMergeRef(t *testing.T) {
	ns := []int{1, 2, 1023, 1024, 1025, 100003}
	dims := []int{1, 31, 384, 768}
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range ns {
		for _, dim := range dims {
			if (testing.Short() || gpuRace) && n*dim > 1<<22 {
				t.Logf("n=%d dim=%d skipped under -short or -race (minutes there); plain go test runs it", n, dim)
				continue
			}
			quantized := !(dim == 31 || (n == 1025 && dim == 384))
			t.Run(fmt.Sprintf("n=%d/dim=%d/quantized=%v", n, dim, quantized), func(t *testing.T) {
				vecs := gpuTestVecs(r, n, dim, quantized)
				oracle, err := NewFlat(vecs, dim, FP16)
				if err != nil {
					t.Fatal(err)
				}
				cfg := GPUConfig{refDevices: 1 + n%3, tileRows: 1000, MaxBatch: 4}
				if n > 50000 {
					cfg.tileRows = 40000
				}
				var g *GPUFlat
				if n%2 == 1 {
					g, err = OpenGPU(writeGPUTestVectorFile(t, vecs, dim), cfg)
				} else {
					g, err = NewGPU(oracle, cfg)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				nq := 5 // MaxBatch 4: two batches
				if n*dim > 1<<24 {
					nq = 2
				}
				q := gpuTestVecs(r, nq, dim, true)
				ks := append(slices.Clone(issueKs), n, n+1)
				wantAll, err := oracle.Search(context.Background(), q, slices.Max(ks))
				if err != nil {
					t.Fatal(err)
				}
				paths := []string{GPUPathAuto, GPUPathTiled, GPUPathSegments}
				if n*dim > 1<<24 {
					paths = paths[:1] // the reference GEMM of each path's tiles is the cost
				}
				for _, path := range paths {
					if err := g.SetPath(path); err != nil {
						t.Fatal(err)
					}
					byK := map[int][][]rlsearch.Hit{}
					for _, k := range ks {
						got, err := g.Search(context.Background(), q, k)
						if err != nil {
							t.Fatalf("%s k=%d: %v", path, k, err)
						}
						if len(got) != nq {
							t.Fatalf("%s k=%d: %d result lists for %d queries", path, k, len(got), nq)
						}
						for qi := range got {
							want := wantAll[qi][:min(k, len(wantAll[qi]))]
							compareHits(t, fmt.Sprintf("%s k=%d q%d", path, k, qi), got[qi], want, quantized, 1e-4*float64(dim), oracle, q[qi*dim:(qi+1)*dim])
						}
						byK[k] = got
					}
					checkPrefix256(t, path, byK[256], byK[257])
				}
				if g.Overflows() != 0 {
					t.Errorf("%d queries overflowed the survivor buffers", g.Overflows())
				}
			})
		}
	}
}

// TestGPUScanOverflowRef: with survivor buffers far too small (8 per query
// of a full batch, 10 for these 3 queries, and data whose scores rise along the rows so that every row
// beats the threshold), the threshold pipeline flags the queries and
// answers them with the segment pipeline: still exact.
func TestGPUScanOverflowRef(t *testing.T) {
	const n, dim, nq = 3000, 8, 3
	vecs := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		vecs[i*dim] = float32(i) / 16 // score of query e0 grows with the row
		vecs[i*dim+1] = float32(i%7) / 2
	}
	oracle, _ := NewFlat(vecs, dim, FP16)
	for _, path := range []string{GPUPathFused, GPUPathTiled} {
		g, err := NewGPU(oracle, GPUConfig{refDevices: 1, MaxBatch: 4, scanCap: 8, Path: path})
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float32, nq*dim)
		q[0], q[dim+1], q[2*dim] = 1, 1, -1
		for _, k := range []int{1, 5, 100} {
			got, err := g.Search(context.Background(), q, k)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := oracle.Search(context.Background(), q, k)
			for qi := range want {
				compareHits(t, fmt.Sprintf("%s k=%d q%d", path, k, qi), got[qi], want[qi], true, 0, oracle, nil)
			}
		}
		if g.Overflows() == 0 {
			t.Errorf("%s: no query overflowed a capacity of 8 survivors: the fallback is not covered", path)
		}
		g.Close()
	}
}

// int8Flat is an int8 Flat whose every score is exact in float32:
// codes in [-128, 127], scales in {1/2, 1, 2}, offsets multiples of 1/4;
// with queries of multiples of 1/2 (exact in fp16, and so is q∘scale) the
// oracle's decoded products and the int8 kernels' Σ q·offset + Σ
// (q∘scale)·code agree bit for bit. Rows repeat codes so that ties are
// common.
func int8Flat(r *rand.Rand, n, dim int) *Flat {
	h := Header{DType: INT8, Count: n, Dim: dim, Scale: make([]float32, dim), Offset: make([]float32, dim)}
	for j := range dim {
		h.Scale[j] = []float32{0.5, 1, 2}[r.IntN(3)]
		h.Offset[j] = float32(r.IntN(9)-4) / 4
	}
	codes := make([]int8, n*dim)
	for i := range n {
		if i > 0 && r.IntN(5) == 0 {
			copy(codes[i*dim:(i+1)*dim], codes[(i-1)*dim:i*dim]) // a tie with the row before
			continue
		}
		for j := range dim {
			codes[i*dim+j] = int8(r.IntN(256) - 128)
		}
	}
	return &Flat{h: h, i8: codes, kernel: defaultKernel}
}

// sameAsFlat checks that g's top-k of q equals oracle.Search's exactly
// (rows, order, scores) for every k in ks.
func sameAsFlat(t *testing.T, name string, g *GPUFlat, oracle *Flat, q []float32, ks ...int) {
	t.Helper()
	for _, k := range ks {
		got, err := g.Search(context.Background(), q, k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := oracle.Search(context.Background(), q, k)
		for qi := range want {
			compareHits(t, fmt.Sprintf("%s k=%d q%d", name, k, qi), got[qi], want[qi], true, 0, oracle, nil)
		}
	}
}

// TestGPUInt8Ref: GPUConfig.Int8 over an int8 shard (the reference
// devices run the host side: upload of the codes, PackI8Queries, the
// fused int8 path, the overflow rerun over spans of the capacity, host
// selection for k > 2,048 from the scan's output, several devices)
// equals Flat.Search exactly: rows, order, scores.
func TestGPUInt8Ref(t *testing.T) {
	r := rand.New(rand.NewPCG(71, 3))
	const n, dim, nq = 5000, 32, 5
	oracle := int8Flat(r, n, dim)
	q := gpuTestVecs(r, nq, dim, true)
	for _, cfg := range []GPUConfig{{refDevices: 1, MaxBatch: 8}, {refDevices: 3, MaxBatch: 8}, {refDevices: 1, MaxBatch: 8, scanCap: 40}} {
		cfg.Int8 = true
		g, err := NewGPU(oracle, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if g.Header().DType != INT8 || !strings.Contains(g.Paths(), "rls_scan16_i8") {
			t.Errorf("int8 index: header %v, paths %q", g.Header().DType, g.Paths())
		}
		sameAsFlat(t, fmt.Sprintf("devices=%d cap=%d", cfg.refDevices, cfg.scanCap), g, oracle, q, 1, 10, 257, 2049, n)
		if cfg.scanCap > 0 && g.Overflows() == 0 {
			t.Errorf("cap %d: no query overflowed: the int8 rerun is not covered", cfg.scanCap)
		}
		g.Close()
	}
}

// TestGPUInt8OpenShard: OpenGPU streams an int8 shard file's codes as
// stored (zstd blocks of 1,000 rows) and the index equals Flat.Search.
func TestGPUInt8OpenShard(t *testing.T) {
	r := rand.New(rand.NewPCG(73, 3))
	const n, dim = 2500, 48
	oracle := int8Flat(r, n, dim)
	path := filepath.Join(t.TempDir(), "i8.shard")
	if err := WriteVectorFile(path, oracle, Header{BlockRows: 1000, Zstd: true}); err != nil {
		t.Fatal(err)
	}
	g, err := OpenGPU(path, GPUConfig{refDevices: 2, MaxBatch: 8, Int8: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sameAsFlat(t, "shard", g, oracle, gpuTestVecs(r, 3, dim, true), 1, 100, 3000)
}

// TestGPUInt8Differential: the int8 kernels on a real GPU against the
// flat oracle (exact scores: see int8Flat), batches 1, 17 and 130, k up
// to past 2,048. Skipped without a GPU (fails under REQUIRE_GPU=1).
func TestGPUInt8Differential(t *testing.T) {
	r := rand.New(rand.NewPCG(79, 3))
	probe := int8Flat(r, 10, 32)
	g, err := NewGPU(probe, GPUConfig{Int8: true})
	if err != nil {
		cudatest.Skip(t, err)
	}
	g.Close()
	for _, n := range []int{1, 1000, 100003} {
		for _, dim := range []int{32, 768} {
			oracle := int8Flat(r, n, dim)
			g, err := NewGPU(oracle, GPUConfig{Int8: true, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			for _, nq := range []int{1, 17, 130} {
				sameAsFlat(t, fmt.Sprintf("n=%d dim=%d nq=%d", n, dim, nq), g, oracle, gpuTestVecs(r, nq, dim, true), 1, 10, 256, 257, 2048, 2049)
			}
			g.Close()
		}
	}
}

// TestGPUInt8Refuses: GPUConfig.Int8 names what it needs.
func TestGPUInt8Refuses(t *testing.T) {
	vecs := gpuTestVecs(rand.New(rand.NewPCG(1, 2)), 100, 32, true)
	f16, _ := NewFlat(vecs, 32, FP16)
	if _, err := NewGPU(f16, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "int8 vector file") {
		t.Errorf("fp16 shard: %v", err)
	}
	odd := gpuTestVecs(rand.New(rand.NewPCG(1, 2)), 100, 24, true)
	i8, _ := NewFlat(odd, 24, INT8)
	if _, err := NewGPU(i8, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "multiple of 16") {
		t.Errorf("dim 24: %v", err)
	}
	if _, err := NewGPUStream(Header{Count: 1, Dim: 32}, nil, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "int8 vector file") {
		t.Errorf("stream of an fp32 header: %v", err)
	}
	// An fp16 header with scales but no offsets: the dtype is named (it
	// used to index the missing offsets).
	if _, err := NewGPUStream(Header{DType: FP16, Count: 1, Dim: 32, Scale: make([]float32, 32)}, nil, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "this one is fp16") {
		t.Errorf("stream of an fp16 header with scales: %v", err)
	}
	if _, err := NewGPUStream(Header{DType: INT8, Count: 1, Dim: 32, Scale: make([]float32, 31), Offset: make([]float32, 32)}, nil, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "31 scales") {
		t.Errorf("stream with 31 scales: %v", err)
	}
	nan := make([]float32, 32)
	nan[5] = float32(math.NaN())
	if _, err := NewGPUStream(Header{DType: INT8, Count: 1, Dim: 32, Scale: make([]float32, 32), Offset: nan}, nil, GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, rlsearch.ErrBadInput) || !strings.Contains(err.Error(), "dimension 5") {
		t.Errorf("stream with a NaN offset: %v", err)
	}
}

// TestGPUInt8Stream: NewGPUStream of int8 codes (blocks of uneven size)
// under GPUConfig.Int8 equals Flat.Search over the same codes, and a
// stream of the wrong byte count is ErrCorrupt.
func TestGPUInt8Stream(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 3))
	const n, dim = 3001, 64
	oracle := int8Flat(r, n, dim)
	stream := func(extra int) RowSource {
		lo := 0
		return func() (int, []byte, error) {
			if lo >= n {
				return lo, nil, io.EOF
			}
			hi := min(lo+700, n)
			buf := make([]byte, 0, (hi-lo)*dim+extra)
			for _, c := range oracle.i8[lo*dim : hi*dim] {
				buf = append(buf, byte(c))
			}
			buf = append(buf, make([]byte, extra)...)
			row0 := lo
			lo = hi
			return row0, buf, nil
		}
	}
	h := oracle.Header()
	g, err := NewGPUStream(h, stream(0), GPUConfig{refDevices: 2, MaxBatch: 8, Int8: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	sameAsFlat(t, "stream", g, oracle, gpuTestVecs(r, 4, dim, true), 1, 10, 300)
	if _, err := NewGPUStream(h, stream(dim/2), GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "not whole rows") {
		t.Errorf("blocks of half rows: %v, want ErrCorrupt", err)
	}
	skip := func() RowSource { // the second block claims row 5
		calls := 0
		return func() (int, []byte, error) {
			calls++
			return []int{0, 5}[min(calls, 2)-1], make([]byte, dim), nil
		}
	}
	if _, err := NewGPUStream(h, skip(), GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "expected row 1") {
		t.Errorf("out of order: %v, want ErrCorrupt", err)
	}
	small := h
	small.Count = 2000
	if _, err := NewGPUStream(small, stream(0), GPUConfig{refDevices: 1, Int8: true}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "past the header's 2000") {
		t.Errorf("more rows than the header: %v, want ErrCorrupt", err)
	}
}

// TestScanSpans: spans tile [0, rows) in ascending order, the first fits
// the survivor capacity (θ = 0 there), each later one grows by at most
// target/k times the rows before it.
func TestScanSpans(t *testing.T) {
	for _, tc := range []struct{ rows, k, cap int }{{1, 1, 16384}, {5, 10, 16384}, {21_000_000, 10, 16384}, {21_000_000, 2048, 16384},
		{21_000_000, 2048, 1 << 20}, {100003, 257, 50}, {3000, 5, 8}} {
		sp := scanSpans(tc.rows, tc.k, tc.cap)
		if sp[0].lo != 0 || sp[len(sp)-1].hi != tc.rows {
			t.Fatalf("%+v: spans %v do not cover the rows", tc, sp)
		}
		if first := sp[0].hi; first > tc.cap || first > scanFirstSpan {
			t.Errorf("%+v: first span of %d rows exceeds the capacity", tc, first)
		}
		target := max(1, min(tc.cap/4, scanTargetSurvivors))
		for i := 1; i < len(sp); i++ {
			if sp[i].lo != sp[i-1].hi || sp[i].hi <= sp[i].lo {
				t.Fatalf("%+v: span %d = %v after %v", tc, i, sp[i], sp[i-1])
			}
			if grow := (sp[i].hi - sp[i].lo) / sp[i].lo; grow > max(1, target/tc.k) {
				t.Errorf("%+v: span %d grows %d×, more than %d", tc, i, grow, max(1, target/tc.k))
			}
		}
		t.Logf("rows %d k %d cap %d: %d spans", tc.rows, tc.k, tc.cap, len(sp))
	}
}

// TestGPUPathChoice: the pipeline per batch size and path, and SetPath.
func TestGPUPathChoice(t *testing.T) {
	for _, tc := range []struct {
		path       string
		dim, nq, k int
		want       string
	}{
		{GPUPathAuto, 768, 1, 10, "fused rls_scan16"},
		{GPUPathAuto, 768, 16, 10, "fused rls_scan16"},
		{GPUPathAuto, 768, 17, 10, "fused rls_scan64"},
		{GPUPathAuto, 768, 65, 10, "fused rls_scan128"},
		{GPUPathAuto, 768, 512, 2048, "fused rls_scan128"},
		{GPUPathAuto, 768, 512, 2049, "host selection"},
		{GPUPathAuto, 31, 1, 10, GPUPathTiled},
		{GPUPathFused, 31, 1, 10, GPUPathTiled},
		{GPUPathTiled, 768, 1, 10, GPUPathTiled},
		{GPUPathSegments, 768, 64, 10, GPUPathSegments},
	} {
		if got := choosePath(tc.path, tc.dim, tc.nq, tc.k, false).String(); got != tc.want {
			t.Errorf("choosePath(%s, dim %d, nq %d, k %d) = %s, want %s", tc.path, tc.dim, tc.nq, tc.k, got, tc.want)
		}
	}
	want := "path auto: batch 1–16 fused rls_scan16, batch 17–64 fused rls_scan64, batch 65–512 fused rls_scan128; k > 2048 host selection"
	if got := describePaths(GPUPathAuto, 768, 512, false); got != want {
		t.Errorf("describePaths = %q, want %q", got, want)
	}
	vecs := gpuTestVecs(rand.New(rand.NewPCG(1, 2)), 100, 8, true)
	oracle, _ := NewFlat(vecs, 8, FP16)
	g, err := NewGPU(oracle, GPUConfig{refDevices: 1, MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.SetPath("fast"); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("SetPath(fast) = %v, want ErrBadInput", err)
	}
	if err := g.SetPath(GPUPathTiled); err != nil || !strings.Contains(g.Paths(), "batch 1–8 tiled") {
		t.Errorf("after SetPath(tiled): %v, %q", err, g.Paths())
	}
	if err := (GPUConfig{Path: "fast"}).Validate(); err == nil {
		t.Error("GPUConfig{Path: fast}.Validate() = nil")
	}
}

// TestGPUBatchingConcurrentRef: many goroutines with different batch sizes
// and k (including k > kernels.KMax, which runs alone) through the batcher
// over three simulated devices; every answer equals the oracle's.
func TestGPUBatchingConcurrentRef(t *testing.T) {
	const n, dim = 5003, 16
	r := rand.New(rand.NewPCG(9, 10))
	vecs := gpuTestVecs(r, n, dim, true)
	oracle, _ := NewFlat(vecs, dim, FP16)
	g, err := NewGPU(oracle, GPUConfig{refDevices: 3, tileRows: 1024, MaxBatch: 8, BatchWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(uint64(w), 1))
			for it := 0; it < 4; it++ {
				nq := 1 + rr.IntN(12)
				k := []int{1, 5, 64, 1500, 2000, 2048, 3000}[rr.IntN(7)]
				q := gpuTestVecs(rr, nq, dim, true)
				got, err := g.Search(context.Background(), q, k)
				if err != nil {
					errs <- err
					return
				}
				want, _ := oracle.Search(context.Background(), q, k)
				for qi := range want {
					if len(got[qi]) != len(want[qi]) {
						errs <- fmt.Errorf("worker %d nq=%d k=%d q%d: %d hits, want %d", w, nq, k, qi, len(got[qi]), len(want[qi]))
						return
					}
					for i := range want[qi] {
						if got[qi][i] != want[qi][i] {
							errs <- fmt.Errorf("worker %d nq=%d k=%d q%d rank %d: %+v, want %+v", w, nq, k, qi, i, got[qi][i], want[qi][i])
							return
						}
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGPUBadInputRef(t *testing.T) {
	vecs := gpuTestVecs(rand.New(rand.NewPCG(1, 1)), 10, 4, true)
	oracle, _ := NewFlat(vecs, 4, FP16)
	g, err := NewGPU(oracle, GPUConfig{refDevices: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Search(ctx, make([]float32, 5), 1); !errors.Is(err, ErrDim) {
		t.Errorf("query of 5 values, dim 4: got %v, want ErrDim", err)
	}
	if _, err := g.Search(ctx, make([]float32, 4), -1); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("k=-1: got %v, want ErrBadInput", err)
	}
	if res, err := g.Search(ctx, make([]float32, 8), 0); err != nil || len(res) != 2 || len(res[0]) != 0 {
		t.Errorf("k=0: got %v, %v; want two empty lists", res, err)
	}
	if res, err := g.Search(ctx, nil, 3); err != nil || len(res) != 0 {
		t.Errorf("no queries: got %v, %v", res, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := g.Search(cctx, make([]float32, 4), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: got %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Search(ctx, make([]float32, 4), 1); !errors.Is(err, ErrGPUClosed) {
		t.Errorf("after Close: got %v, want ErrGPUClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	for _, c := range []GPUConfig{{WorkspaceBytes: -1}, {MaxBatch: -1}, {Devices: []int{0, 0}}} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
}

func TestGPUPlan(t *testing.T) {
	tests := []struct {
		dim, rows, batch int
		budget           int64
		wantErr          bool
	}{
		{768, 21_000_000, 512, 4 << 30, false},
		{768, 1_000_000, 1, 4 << 30, false},
		{384, 100, 512, 1 << 30, false},
		{768, 21_000_000, 512, 1 << 20, true},
		{16, 32001, 4, 1 << 30, false}, // k=2000 needs more slots than k=2048 here
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("dim=%d/rows=%d/batch=%d/budget=%d", tt.dim, tt.rows, tt.batch, tt.budget), func(t *testing.T) {
			p, err := planFor(tt.dim, tt.rows, tt.batch, tt.budget, 0)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if p.workspaceBytes() > tt.budget {
				t.Errorf("workspace %d exceeds budget %d", p.workspaceBytes(), tt.budget)
			}
			if p.tileRows != tt.rows && p.tileRows%1024 != 0 {
				t.Errorf("tile %d is neither the share nor a multiple of 1024", p.tileRows)
			}
			for k := 1; k <= kernels.KMax; k++ {
				if c := candPerQuery(k, p.tileRows); c > p.candLd {
					t.Fatalf("k=%d needs %d candidate slots, plan has %d", k, c, p.candLd)
				}
				for _, nq := range []int{1, 64, tt.batch} {
					seg := segLenRun(k, nq, p.tileRows)
					if seg < segLenFor(k) || (1+(p.tileRows+seg-1)/seg)*k > p.candLd {
						t.Fatalf("k=%d nq=%d: segment %d leaves candidates beyond the plan's %d", k, nq, seg, p.candLd)
					}
				}
			}
			t.Logf("tile %d rows, workspace %d MiB", p.tileRows, p.workspaceBytes()>>20)
		})
	}
}

// TestGPUDifferential runs the real GPU index against the flat oracle with
// every path (threshold fused and tiled, segments), batches of 1, 17 and
// 512 and the issue's k (top-257's first 256 equal top-256). With
// no GPU it checks the no-device path instead (OpenGPU's error matches
// cuda.ErrNoDevice so callers fall back to the CPU), and fails under
// REQUIRE_GPU=1.
func TestGPUDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	vecs := gpuTestVecs(r, 1025, 31, true)
	path := writeGPUTestVectorFile(t, vecs, 31)
	g, err := OpenGPU(path, GPUConfig{})
	if err != nil {
		if os.Getenv(cudatest.EnvRequireGPU) != "1" && errors.Is(err, cuda.ErrNoDevice) {
			t.Logf("no GPU: OpenGPU returned %v (matches cuda.ErrNoDevice: callers fall back to the CPU)", err)
		}
		cudatest.Skip(t, err)
	}
	g.Close()
	for _, n := range []int{1, 2, 1023, 1024, 1025, 100003} {
		for _, dim := range []int{1, 31, 384, 768} {
			for _, quantized := range []bool{true, false} {
				t.Run(fmt.Sprintf("n=%d/dim=%d/quantized=%v", n, dim, quantized), func(t *testing.T) {
					vecs := gpuTestVecs(r, n, dim, quantized)
					oracle, _ := NewFlat(vecs, dim, FP16)
					cfgs := []GPUConfig{{Logf: t.Logf}, {WorkspaceBytes: 160 << 20, MaxBatch: 512}}
					gs := make([]*GPUFlat, len(cfgs))
					for i, cfg := range cfgs {
						g, err := NewGPU(oracle, cfg)
						if err != nil {
							t.Fatal(err)
						}
						defer g.Close()
						gs[i] = g
					}
					ks := append(slices.Clone(issueKs), n, n+1)
					for _, nq := range []int{1, 17, 512} {
						q := gpuTestVecs(r, nq, dim, true)
						wantAll, _ := oracle.Search(context.Background(), q, slices.Max(ks))
						for _, path := range []string{GPUPathAuto, GPUPathTiled, GPUPathSegments} {
							for ci, g := range gs {
								if err := g.SetPath(path); err != nil {
									t.Fatal(err)
								}
								byK := map[int][][]rlsearch.Hit{}
								for _, k := range ks {
									if nq > 1 && k > kernels.KMax && n > 2000 {
										continue // host selection of full score rows: slow, covered at nq=1
									}
									got, err := g.Search(context.Background(), q, k)
									if err != nil {
										t.Fatalf("%s config %d nq=%d k=%d: %v", path, ci, nq, k, err)
									}
									for qi := range wantAll {
										want := wantAll[qi][:min(k, len(wantAll[qi]))]
										compareHits(t, fmt.Sprintf("%s config %d nq=%d k=%d q%d", path, ci, nq, k, qi), got[qi], want, quantized, 2e-3*math.Sqrt(float64(dim)), oracle, q[qi*dim:(qi+1)*dim])
									}
									byK[k] = got
								}
								checkPrefix256(t, fmt.Sprintf("%s config %d nq=%d", path, ci, nq), byK[256], byK[257])
							}
						}
					}
					for _, g := range gs {
						if g.Overflows() != 0 {
							t.Errorf("%d queries overflowed the survivor buffers", g.Overflows())
						}
					}
				})
			}
		}
	}
}

// TestSyntheticUnitSource checks the benchmark's corpus generator: rows in
// order, unit norm to fp16 precision, deterministic.
func TestSyntheticUnitSource(t *testing.T) {
	const n, dim = 70000, 8
	src := syntheticUnitSource(n, dim, 1)
	seen := 0
	for {
		row0, raw, err := src()
		if err == io.EOF {
			break
		}
		if err != nil || row0 != seen {
			t.Fatalf("block at %d (want %d): %v", row0, seen, err)
		}
		rows := len(raw) / (2 * dim)
		for r := 0; r < rows; r++ {
			var ss float64
			for j := 0; j < dim; j++ {
				v := float64(float16.Frombits(binary.LittleEndian.Uint16(raw[2*(r*dim+j):])).Float32())
				ss += v * v
			}
			if math.Abs(ss-1) > 2e-3 {
				t.Fatalf("row %d: squared norm %v", row0+r, ss)
			}
		}
		seen += rows
	}
	if seen != n {
		t.Fatalf("%d rows, want %d", seen, n)
	}
}

// TestGPULargeBatchSegmentsRef covers the batch-dependent segment length
// (segLenRun above segLenFor: 35,000 × 300 / 2,048 = 5,126 rows, not a
// power of two) against the oracle, exactly, on two simulated devices.
func TestGPULargeBatchSegmentsRef(t *testing.T) {
	const n, dim, nq = 70001, 4, 300
	r := rand.New(rand.NewPCG(13, 14))
	vecs := gpuTestVecs(r, n, dim, true)
	oracle, _ := NewFlat(vecs, dim, FP16)
	g, err := NewGPU(oracle, GPUConfig{refDevices: 2, tileRows: 40000, MaxBatch: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if tile := g.plans[0].tileRows; segLenRun(10, nq, tile) == segLenFor(10) {
		t.Fatalf("segLenRun(10, %d, %d) = %d: the test no longer covers the grown segment", nq, tile, segLenRun(10, nq, tile))
	}
	q := gpuTestVecs(r, nq, dim, true)
	ks := []int{10, 300}
	if gpuRace {
		ks = ks[:1] // the reference sorts dominate under -race
	}
	sameAsFlat(t, "segments", g, oracle, q, ks...)
}
