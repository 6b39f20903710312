// Command annbench runs this project's ANN indexes over .fvecs files and
// prints one JSON object per measurement, for bench/ann/compare.py, which
// runs faiss on the same files and prints the side-by-side table.
//
//	annbench -base b.fvecs -queries q.fvecs -mode flat -batch 1,64 -k 10
//	annbench -base b.fvecs -queries q.fvecs -gt gt.ivecs -mode hnsw -M 16 -efc 100 -efs 16,32,64,128
//
// Threads are set with GOMAXPROCS (compare.py sets it equal to faiss's
// OpenMP and OpenBLAS thread counts).
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
)

func main() {
	base := flag.String("base", "", "base vectors (.fvecs)")
	queries := flag.String("queries", "", "query vectors (.fvecs)")
	gt := flag.String("gt", "", "ground truth (.ivecs); computed with exact flat search when empty")
	mode := flag.String("mode", "flat", "flat or hnsw")
	dtype := flag.String("dtype", "fp32", "flat storage: fp32, fp16 or int8")
	batches := flag.String("batch", "1,64", "flat: query batch sizes")
	k := flag.Int("k", 10, "hits per query")
	m := flag.Int("M", 16, "hnsw: M")
	efc := flag.Int("efc", 100, "hnsw: efConstruction")
	efs := flag.String("efs", "16,32,64,128,256", "hnsw: efSearch values")
	int8 := flag.Bool("int8", false, "hnsw: int8 traversal with fp32 re-rank")
	minTime := flag.Duration("time", 3*time.Second, "minimum time per measurement")
	flag.Parse()
	if err := run(*base, *queries, *gt, *mode, *dtype, *batches, *k, *m, *efc, *efs, *int8, *minTime); err != nil {
		fmt.Fprintln(os.Stderr, "annbench:", err)
		os.Exit(1)
	}
}

func emit(v map[string]any) {
	v["threads"] = runtime.GOMAXPROCS(0)
	v["kernel"] = ann.KernelName()
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func run(basePath, qPath, gtPath, mode, dtype, batches string, k, m, efc int, efs string, int8 bool, minTime time.Duration) error {
	ctx := context.Background()
	base, dim, err := readFvecs(basePath)
	if err != nil {
		return err
	}
	q, qdim, err := readFvecs(qPath)
	if err != nil {
		return err
	}
	if qdim != dim {
		return fmt.Errorf("query dim %d, base dim %d", qdim, dim)
	}
	nq := len(q) / dim
	switch mode {
	case "flat":
		dt, err := ann.ParseDType(dtype)
		if err != nil {
			return err
		}
		f, err := ann.NewFlat(base, dim, dt)
		if err != nil {
			return err
		}
		for _, bs := range strings.Split(batches, ",") {
			b, _ := strconv.Atoi(bs)
			if b <= 0 {
				return fmt.Errorf("bad batch %q", bs)
			}
			done := 0
			start := time.Now()
			for time.Since(start) < minTime {
				lo := (done * dim) % len(q)
				hi := min(lo+b*dim, len(q))
				if _, err := f.Search(ctx, q[lo:hi], k); err != nil {
					return err
				}
				done += (hi - lo) / dim
			}
			el := time.Since(start).Seconds()
			emit(map[string]any{"lib": "rlsearch", "index": "flat", "dtype": dtype, "n": f.Len(), "dim": dim, "batch": b, "k": k, "qps": float64(done) / el})
		}
	case "hnsw":
		var truth [][]int32
		if gtPath != "" {
			if truth, err = readIvecs(gtPath, k); err != nil {
				return err
			}
		} else {
			f, _ := ann.NewFlat(base, dim, ann.FP32)
			hits, err := f.Search(ctx, q, k)
			if err != nil {
				return err
			}
			for _, hs := range hits {
				var row []int32
				for _, h := range hs {
					row = append(row, h.Row)
				}
				truth = append(truth, row)
			}
		}
		start := time.Now()
		h, err := ann.NewHNSW(ctx, base, dim, ann.HNSWConfig{M: m, EfConstruction: efc, Seed: 1, Int8: int8})
		if err != nil {
			return err
		}
		build := time.Since(start).Seconds()
		vb, cb, gb := h.MemoryBytes()
		emit(map[string]any{"lib": "rlsearch", "index": "hnsw", "event": "build", "n": h.Len(), "dim": dim, "M": m, "efc": efc, "int8": int8,
			"build_s": build, "graph_bytes_per_vec": float64(gb) / float64(h.Len()), "vector_bytes_per_vec": float64(vb) / float64(h.Len()), "code_bytes_per_vec": float64(cb) / float64(h.Len())})
		for _, es := range strings.Split(efs, ",") {
			ef, _ := strconv.Atoi(es)
			h.SetEfSearch(ef)
			var hits [][]rlsearch.Hit
			reps := 0
			start := time.Now()
			for time.Since(start) < minTime || reps == 0 {
				if hits, err = h.Search(ctx, q, k); err != nil {
					return err
				}
				reps++
			}
			el := time.Since(start).Seconds()
			emit(map[string]any{"lib": "rlsearch", "index": "hnsw", "n": h.Len(), "dim": dim, "M": m, "efc": efc, "efs": ef, "int8": int8, "k": k,
				"qps": float64(reps*nq) / el, "recall": recall(hits, truth, k)})
		}
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return nil
}

func recall(hits [][]rlsearch.Hit, truth [][]int32, k int) float64 {
	var s float64
	for i, hs := range hits {
		want := map[int32]bool{}
		for _, r := range truth[i][:min(k, len(truth[i]))] {
			want[r] = true
		}
		found := 0
		for _, h := range hs {
			if want[h.Row] {
				found++
			}
		}
		s += float64(found) / float64(len(want))
	}
	return s / float64(len(hits))
}

// readFvecs reads TEXMEX .fvecs: per row an int32 dimension then float32s.
func readFvecs(path string) ([]float32, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("%s: empty", path)
	}
	dim := int(binary.LittleEndian.Uint32(b))
	row := 4 + 4*dim
	if dim <= 0 || len(b)%row != 0 {
		return nil, 0, fmt.Errorf("%s: size %d is not a multiple of row %d", path, len(b), row)
	}
	out := make([]float32, 0, len(b)/row*dim)
	for off := 0; off < len(b); off += row {
		if int(binary.LittleEndian.Uint32(b[off:])) != dim {
			return nil, 0, fmt.Errorf("%s: row at %d has another dimension", path, off)
		}
		for j := 0; j < dim; j++ {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(b[off+4+4*j:])))
		}
	}
	return out, dim, nil
}

func readIvecs(path string, k int) ([][]int32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for off := 0; off+4 <= len(b); {
		d := int(binary.LittleEndian.Uint32(b[off:]))
		if off+4+4*d > len(b) {
			return nil, fmt.Errorf("%s: truncated", path)
		}
		var row []int32
		for j := 0; j < min(d, k); j++ {
			row = append(row, int32(binary.LittleEndian.Uint32(b[off+4+4*j:])))
		}
		out = append(out, row)
		off += 4 + 4*d
	}
	return out, nil
}
