package ann

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

// Roofline constants of the device the issue was measured on (one H200):
// ≈790 TFLOP/s dense fp16 GEMM and ≈4.3 TB/s HBM3e read bandwidth (issue 6,
// "Why"). Override with RLSEARCH_GPU_PEAK_TFLOPS / RLSEARCH_GPU_PEAK_TBPS.
const (
	gpuPeakTFLOPS = 790.0
	gpuPeakTBps   = 4.3
)

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil && v > 0 {
		return v
	}
	return def
}

// syntheticUnitSource yields n random unit vectors of dim (seeded, uniform
// direction) as fp16 blocks of 65,536 rows, generated on all cores, so that
// a 21M × 768 corpus streams to the GPU without ever being whole in host
// memory.
func syntheticUnitSource(n, dim int, seed uint64) RowSource {
	const block = 1 << 16
	lo := 0
	buf := make([]byte, block*dim*2)
	return func() (int, []byte, error) {
		if lo >= n {
			return lo, nil, io.EOF
		}
		hi := min(lo+block, n)
		rows := hi - lo
		var wg sync.WaitGroup
		workers := runtime.GOMAXPROCS(0)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				v := make([]float32, dim)
				for r := w; r < rows; r += workers {
					rng := rand.New(rand.NewPCG(seed, uint64(lo+r)))
					var ss float64
					for j := range v {
						v[j] = float32(rng.NormFloat64())
						ss += float64(v[j]) * float64(v[j])
					}
					inv := float32(1 / math.Sqrt(ss))
					for j := range v {
						binary.LittleEndian.PutUint16(buf[2*(r*dim+j):], float16.Fromfloat32(v[j]*inv).Bits())
					}
				}
			}(w)
		}
		wg.Wait()
		row0 := lo
		lo = hi
		return row0, buf[:rows*dim*2], nil
	}
}

func unitQueries(nq, dim int, seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 99))
	q := make([]float32, nq*dim)
	for i := 0; i < nq; i++ {
		v := q[i*dim : (i+1)*dim]
		var ss float64
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
	}
	return q
}

// BenchmarkGPUThroughput measures GPUFlat.Search queries/s and latency at
// batch 1, 64 and 512 (k = 10) over n synthetic 768-d fp16 unit vectors
// for each n in $RLSEARCH_GPU_BENCH_N (comma-separated; default 1000000),
// and the fraction of the roofline (fp16 GEMM at peak plus one read of the
// shard) reached. bench/gpu/run.sh runs it on the device; one JSON line per
// measurement goes to $RLSEARCH_GPU_BENCH_JSON when set.
func BenchmarkGPUThroughput(b *testing.B) {
	const dim, k = 768, 10
	sizes := []int{1_000_000}
	if s := os.Getenv("RLSEARCH_GPU_BENCH_N"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("RLSEARCH_GPU_BENCH_N: bad size %q", f)
			}
			sizes = append(sizes, n)
		}
	}
	var jsonOut *os.File
	if p := os.Getenv("RLSEARCH_GPU_BENCH_JSON"); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		jsonOut = f
	}
	peakF, peakB := envFloat("RLSEARCH_GPU_PEAK_TFLOPS", gpuPeakTFLOPS)*1e12, envFloat("RLSEARCH_GPU_PEAK_TBPS", gpuPeakTBps)*1e12
	for _, n := range sizes {
		t0 := time.Now()
		g, err := newGPU(Header{DType: FP16, Count: n, Dim: dim, Normalized: true}, syntheticUnitSource(n, dim, 1), GPUConfig{}.withDefaults())
		if err != nil {
			cudatest.Skip(b, err)
		}
		upload := time.Since(t0)
		b.Logf("n=%d: generated and uploaded in %v to %v (tile %d rows)", n, upload, g.Devices(), g.plans[0].tileRows)
		for _, batch := range []int{1, 64, 512} {
			b.Run(fmt.Sprintf("n=%d/batch=%d/k=%d", n, batch, k), func(b *testing.B) {
				q := unitQueries(batch, dim, uint64(batch))
				if _, err := g.Search(context.Background(), q, k); err != nil { // warm-up (JIT, cuBLAS heuristics)
					b.Fatal(err)
				}
				b.ResetTimer()
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if _, err := g.Search(context.Background(), q, k); err != nil {
						b.Fatal(err)
					}
				}
				el := time.Since(start)
				lat := el.Seconds() / float64(b.N)
				qps := float64(batch) / lat
				floor := 2*float64(n)*dim*float64(batch)/peakF + float64(n)*dim*2/peakB
				b.ReportMetric(qps, "queries/s")
				b.ReportMetric(lat*1e3, "ms/batch")
				b.ReportMetric(floor/lat, "roofline-fraction")
				if jsonOut != nil {
					line, _ := json.Marshal(map[string]any{"impl": "rlsearch", "n": n, "dim": dim, "batch": batch, "k": k,
						"iters": b.N, "latency_ms": lat * 1e3, "qps": qps, "roofline_ms": floor * 1e3, "roofline_fraction": floor / lat,
						"upload_s": upload.Seconds()})
					fmt.Fprintln(jsonOut, string(line))
				}
			})
		}
		g.Close()
	}
}
