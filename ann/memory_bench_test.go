package ann

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/rlsearch/rlsearch/internal/procstat"
)

// procKB reads a kB field of /proc/self/status ("VmRSS", "VmHWM") in
// bytes, skipping b where there is none.
func procKB(b testing.TB, field string) int64 {
	n, err := procstat.Bytes(0, field)
	if err != nil {
		b.Skip(err)
	}
	return n
}

// resetPeak resets VmHWM to the current RSS (Linux ≥ 4.0, clear_refs 5).
func resetPeak() { os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func settle() {
	runtime.GC()
	debug.FreeOSMemory()
}

// writeRandomVectorFile streams n random unit vectors (seeded) into a shard in
// chunks of 4096 rows, never holding them all.
func writeRandomVectorFile(b testing.TB, path string, n, dim int, dt DType) {
	rng := rand.New(rand.NewSource(1))
	h := Header{DType: dt, Dim: dim, Normalized: true, EncoderID: "random"}
	chunk := make([]float32, 4096*dim)
	if dt == INT8 {
		// Unit vectors with iid normal coordinates: every coordinate lies
		// within ±6/√dim with overwhelming probability.
		r := NewInt8Range(dim)
		lim := float32(6 / math.Sqrt(float64(dim)))
		for j := range chunk[:dim] {
			chunk[j] = -lim
		}
		r.Add(chunk[:dim])
		for j := range chunk[:dim] {
			chunk[j] = lim
		}
		r.Add(chunk[:dim])
		h.Scale, h.Offset = r.Fit()
	}
	w, err := CreateVectorFile(path, h)
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n; lo += 4096 {
		rows := min(4096, n-lo)
		v := chunk[:rows*dim]
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		normalize(v, dim)
		if err := w.Append(v); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkResident measures, per vector, the resident memory (VmRSS after
// Open, GC and FreeOSMemory, minus before) and the peak (VmHWM) of each CPU
// backend over RLSEARCH_MEM_N (default 20,000) random unit 768-d vectors,
// and the peak of writing the shard. Run each case in its own process
// with -benchtime=1x, e.g.
//
//	RLSEARCH_MEM_N=1000000 go test ./ann -run '^$' -bench 'Resident/flat-fp16' -benchtime 1x
func BenchmarkResident(b *testing.B) {
	n := 20000
	if s := os.Getenv("RLSEARCH_MEM_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	const dim = 768
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		dt      DType
		backend string
		int8    bool
	}{
		{"flat-fp16", FP16, BackendFlat, false},
		{"flat-int8", INT8, BackendFlat, false},
		{"flat-fp32", FP32, BackendFlat, false},
		{"hnsw-fp16-int8codes", FP16, BackendHNSW, true},
		{"hnsw-int8", INT8, BackendHNSW, true},
		{"hnsw-fp16", FP16, BackendHNSW, false},
	} {
		b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "dense.shard")
			settle()
			base := procKB(b, "VmRSS")
			resetPeak()
			writeRandomVectorFile(b, path, n, dim, c.dt)
			b.ReportMetric(float64(procKB(b, "VmHWM")-base)/(1<<20), "write-peak-MiB")
			cfg := Config{Path: path, Backend: c.backend, HNSW: HNSWConfig{M: 16, EfConstruction: 40, Seed: 1, Int8: c.int8}}
			if c.backend == BackendHNSW {
				cfg.HNSWPath = filepath.Join(dir, "dense.hnsw")
				settle()
				base = procKB(b, "VmRSS")
				resetPeak()
				o, err := Open(ctx, cfg) // builds and saves
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(procKB(b, "VmHWM")-base)/float64(n), "build-peak-B/vec")
				o.Close()
				o = nil
			}
			settle()
			base = procKB(b, "VmRSS")
			resetPeak()
			o, err := Open(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			settle()
			b.ReportMetric(float64(procKB(b, "VmRSS")-base)/float64(n), "resident-B/vec")
			b.ReportMetric(float64(procKB(b, "VmHWM")-base)/float64(n), "open-peak-B/vec")
			runtime.KeepAlive(o)
		})
	}
}
