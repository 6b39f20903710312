package ann

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func TestOpenChoosesBackend(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(20))
	dir := t.TempDir()
	vecs := clustered(rng, 600, 16, 20, 0.2)
	path := writeVectorFile(t, dir, vecs, 16, Header{DType: FP16, Zstd: true, Shuffle: true}, nil)
	path8 := writeVectorFile(t, t.TempDir(), vecs, 16, Header{DType: INT8, Zstd: true}, nil)
	g, gpuErr := openGPU(&Flat{h: Header{Dim: 16, DType: FP32}, f32: []float32{}}, GPUConfig{})
	if g != nil {
		g.(interface{ Close() error }).Close()
	}
	gpu := gpuErr == nil
	graph := filepath.Join(dir, "g.hnsw")
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // backend, or error substring after "!"
	}{
		{"auto small", Config{Path: path}, map[bool]string{true: "gpu", false: "flat"}[gpu]},
		{"auto large", Config{Path: path, FlatMax: 100, HNSW: HNSWConfig{M: 8, Seed: 1}}, map[bool]string{true: "gpu", false: "hnsw"}[gpu]},
		{"flat", Config{Path: path, Backend: "flat"}, "flat"},
		{"hnsw builds and saves", Config{Path: path, Backend: "hnsw", HNSWPath: graph, HNSW: HNSWConfig{M: 8, Seed: 1}}, "hnsw"},
		{"hnsw loads", Config{Path: path, Backend: "hnsw", HNSWPath: graph, HNSW: HNSWConfig{EfSearch: 99}}, "hnsw"},
		{"gpu", Config{Path: path, Backend: "gpu"}, map[bool]string{true: "gpu", false: "!GPU backend unavailable"}[gpu]},
		{"bad backend", Config{Path: path, Backend: "faiss"}, "!Config.Backend"},
		{"no path", Config{}, "!Config.Path"},
		{"bad FlatMax", Config{Path: path, FlatMax: -1}, "!Config.FlatMax"},
		{"bad M", Config{Path: path, HNSW: HNSWConfig{M: 1}}, "!HNSWConfig.M"},
		{"missing shard", Config{Path: filepath.Join(dir, "nope")}, "!no such file"},
		{"gpu int8 over fp16", Config{Path: path, GPU: GPUConfig{Int8: true}}, "!GPUConfig.Int8 needs an int8 vector file, this one is fp16 (rebuild the vector file with rlsearch index --dtype int8"},
		{"gpu int8 over fp16, explicit gpu", Config{Path: path, Backend: "gpu", GPU: GPUConfig{Int8: true}}, "!needs an int8 vector file"},
		{"gpu int8 ignored by flat", Config{Path: path, Backend: "flat", GPU: GPUConfig{Int8: true}}, "flat"},
		{"gpu int8 over int8", Config{Path: path8, GPU: GPUConfig{Int8: true}}, map[bool]string{true: "gpu", false: "flat"}[gpu]},
		{"hnsw int8 traversal", Config{Path: path, Backend: "hnsw", HNSWPath: graph, HNSW: HNSWConfig{Int8: true}}, "hnsw"},
		{"flat int8 scan", Config{Path: path, Backend: "flat", FlatInt8Scan: true}, "flat"},
		{"flat int8 scan ignored by hnsw", Config{Path: path, Backend: "hnsw", HNSWPath: graph, FlatInt8Scan: true}, "hnsw"},
		{"flat int8 scan over int8", Config{Path: path8, Backend: "flat", FlatInt8Scan: true}, "!the vector file is int8 already"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Open(ctx, tc.cfg)
			if strings.HasPrefix(tc.want, "!") {
				if err == nil || !strings.Contains(err.Error(), tc.want[1:]) {
					t.Fatalf("error %v, want one containing %q", err, tc.want[1:])
				}
				if tc.name == "gpu" && !errors.Is(err, ErrGPUUnavailable) {
					t.Fatalf("error %v does not match ErrGPUUnavailable", err)
				}
				if (strings.HasPrefix(tc.name, "gpu int8") || strings.HasPrefix(tc.name, "flat int8")) && !errors.Is(err, rlsearch.ErrBadInput) {
					t.Fatalf("error %v does not match rlsearch.ErrBadInput", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if o.Backend != tc.want || o.Reason == "" {
				t.Fatalf("backend %q (%s), want %q", o.Backend, o.Reason, tc.want)
			}
			got, err := o.Search(ctx, vecs[:16*5], 5)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := o.Flat.Search(ctx, vecs[:16*5], 5)
			if r := recallAt(got, want, 5); r < 0.95 {
				t.Fatalf("recall@5 against the shard's exact search: %.2f", r)
			}
			if scan, _ := o.Index.(*Flat); (scan != nil && scan.scan != nil) != (tc.name == "flat int8 scan") || (tc.name == "flat int8 scan") != strings.Contains(o.Reason, "int8 scan") {
				t.Fatalf("int8 scan %v, reason %q: want it exactly when FlatInt8Scan meets the flat backend", scan != nil && scan.scan != nil, o.Reason)
			}
			if tc.name == "flat int8 scan" {
				if r := recallAt(got, want, 5); r != 1 {
					t.Fatalf("int8 scan recall@5 against exact: %.2f", r)
				}
				if o.Flat.scan != nil {
					t.Fatal("Opened.Flat is the int8 scan, want the exact oracle")
				}
			}
			if h, ok := o.Index.(*HNSW); ok && (h.codes != nil) != (tc.name == "hnsw int8 traversal") || (tc.name == "hnsw int8 traversal") != strings.Contains(o.Reason, "int8 traversal true") {
				t.Fatalf("int8 traversal %v, reason %q: want it exactly when HNSW.Int8 is asked", ok && o.Index.(*HNSW).codes != nil, o.Reason)
			}
			if tc.name == "hnsw loads" {
				if h := o.Index.(*HNSW); h.Config().EfSearch != 99 || h.Config().M != 8 {
					t.Fatalf("loaded graph config %+v, want M 8 from the file and EfSearch 99 from Config", h.Config())
				}
			}
		})
	}
	if _, err := os.Stat(graph); err != nil {
		t.Fatalf("graph not saved: %v", err)
	}
	// A graph built for int8 traversal is saved without codes: the file is
	// the same with or without HNSW.Int8, and an open without it does not
	// traverse on codes.
	g8 := filepath.Join(dir, "g8.hnsw")
	o, err := Open(ctx, Config{Path: path, Backend: "hnsw", HNSWPath: g8, HNSW: HNSWConfig{M: 8, Seed: 1, Int8: true}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Index.(*HNSW).codes == nil {
		t.Fatal("built graph without int8 codes")
	}
	o.Close()
	if h, err := LoadHNSW(g8); err != nil || h.codes != nil {
		t.Fatalf("saved int8-traversal graph: %v, codes %v (want none saved)", err, h != nil && h.codes != nil)
	}
}
