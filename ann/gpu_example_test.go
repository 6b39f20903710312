package ann_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/cuda"
)

// ExampleOpenGPU loads a shard onto every GPU and falls back to exact flat
// search on the CPU when there is no driver or device. (Compiled, not run:
// its output depends on the machine.)
func ExampleOpenGPU() {
	path := "index/dense.shard"
	var idx ann.Index
	g, err := ann.OpenGPU(path, ann.GPUConfig{Logf: log.Printf})
	switch {
	case err == nil:
		defer g.Close()
		idx = g
	case errors.Is(err, cuda.ErrNoDevice):
		log.Printf("no GPU (%v): exact flat search on the CPU", err)
		f, err := ann.ReadVectorFile(path)
		if err != nil {
			log.Fatal(err)
		}
		idx = f
	default:
		log.Fatal(err)
	}
	q := make([]float32, 2*idx.Dim()) // two queries, row-major
	hits, err := idx.Search(context.Background(), q, 10)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(hits))
}
