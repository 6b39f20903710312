package ann

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"testing"
)

// TestHNSWShareVectors checks that a graph reading its vectors from the
// shard (ShareVectors, LoadHNSWShared) answers exactly as the graph with
// its own float32 copy of the same (fp16/fp32-rounded) vectors, holds no
// vector bytes of its own, and over an int8 shard re-ranks with the
// shard's values with recall close to exact flat over that shard.
func TestHNSWShareVectors(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(21))
	const n, dim, nq, k = 3000, 33, 50, 10
	vecs := clustered(rng, n+nq, dim, 100, 0.2)
	base, q := vecs[:n*dim], vecs[n*dim:]
	for _, c := range []struct {
		dt   DType
		int8 bool
	}{{FP32, false}, {FP16, false}, {FP16, true}, {INT8, false}, {INT8, true}} {
		t.Run(fmt.Sprintf("%s/int8=%v", c.dt, c.int8), func(t *testing.T) {
			flat, err := NewFlat(base, dim, c.dt)
			if err != nil {
				t.Fatal(err)
			}
			cfg := HNSWConfig{M: 12, EfConstruction: 80, EfSearch: 64, Seed: 3, Int8: c.int8}
			own, err := NewHNSW(ctx, flat.Vectors(0, n), dim, cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := own.Search(ctx, q, k)
			path := filepath.Join(t.TempDir(), "g.hnsw")
			if err := own.Save(path, true); err != nil {
				t.Fatal(err)
			}
			shared, err := NewHNSW(ctx, flat.Vectors(0, n), dim, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := shared.ShareVectors(flat); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadHNSWShared(path, flat)
			if err != nil {
				t.Fatal(err)
			}
			exact, _ := flat.Search(ctx, q, k)
			for name, h := range map[string]*HNSW{"ShareVectors": shared, "LoadHNSWShared": loaded} {
				got, err := h.Search(ctx, q, k)
				if err != nil {
					t.Fatal(err)
				}
				vb, cb, _ := h.MemoryBytes()
				if vb != 0 || (c.dt == INT8 && cb != 0) {
					t.Errorf("%s: still holds %d vector bytes and %d code bytes", name, vb, cb)
				}
				if c.dt != INT8 {
					// Same vectors, same codes: identical answers.
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: results differ from the graph with its own float32 copy", name)
					}
				} else if r := recallAt(got, exact, k); r < 0.9 {
					t.Errorf("%s: recall@%d against flat over the int8 shard = %.3f, want ≥ 0.9", name, k, r)
				}
				if err := h.Add(ctx, base[:dim]); err == nil {
					t.Errorf("%s: Add after sharing accepted", name)
				}
			}
			// A shared graph saves the shard's values; it loads unshared too.
			p2 := filepath.Join(t.TempDir(), "g2.hnsw")
			if err := shared.Save(p2, false); err != nil {
				t.Fatal(err)
			}
			back, err := LoadHNSW(p2)
			if err != nil {
				t.Fatal(err)
			}
			g1, _ := shared.Search(ctx, q, k)
			g2, _ := back.Search(ctx, q, k)
			if c.dt != INT8 && !reflect.DeepEqual(g1, g2) {
				t.Errorf("graph saved after sharing answers differently when loaded")
			}
			small, _ := NewFlat(base[:10*dim], dim, c.dt)
			if _, err := LoadHNSWShared(path, small); err == nil {
				t.Error("LoadHNSWShared over a shard of another size accepted")
			}
		})
	}
}
