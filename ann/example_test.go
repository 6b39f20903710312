package ann_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/ann"
)

// Write a compressed shard, let Open choose the backend, search it.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "ann-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "dense.shard")
	w, _ := ann.CreateVectorFile(path, ann.Header{DType: ann.FP16, Dim: 2, Zstd: true, Shuffle: true})
	w.Append([]float32{1, 0, 0, 1, 0.6, 0.8})
	w.Close()

	o, err := ann.Open(context.Background(), ann.Config{Path: path, Backend: "flat"})
	if err != nil {
		fmt.Println(err)
		return
	}
	hits, _ := o.Search(context.Background(), []float32{0, 1}, 2)
	fmt.Println(o.Backend, hits[0][0].Row, hits[0][1].Row)
	// Output: flat 1 2
}

// Build a small HNSW graph and search it (rows 0 and 2 tie at 0.7: the lower row wins).
func ExampleNewHNSW() {
	vecs := []float32{1, 0, 0.8, 0.6, 0, 1, -1, 0}
	h, _ := ann.NewHNSW(context.Background(), vecs, 2, ann.HNSWConfig{M: 4, Seed: 1})
	hits, _ := h.Search(context.Background(), []float32{0.7, 0.7}, 2)
	fmt.Println(hits[0][0].Row, hits[0][1].Row)
	// Output: 1 0
}
