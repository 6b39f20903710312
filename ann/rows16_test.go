package ann

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestHNSWRerankOn checks the compressed graph: traversal on int8 codes,
// re-rank on mapped fp16 rows. Its candidates are those of the int8 graph
// with float32 re-rank (same traversal), its scores q·fp16(x); recall@10
// against float32 exact must stay at the level of the float32 re-rank.
func TestHNSWRerankOn(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(11))
	const n, dim, nq = 4000, 48, 200
	vecs := clustered(rng, n+nq, dim, 40, 0.2)
	base, q := vecs[:n*dim], vecs[n*dim:]
	flat, _ := NewFlat(base, dim, FP32)
	exact, _ := flat.Search(ctx, q, 10)
	h, err := NewHNSW(ctx, base, dim, HNSWConfig{M: 16, EfConstruction: 100, EfSearch: 64, Seed: 1, Int8: true})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := h.Search(ctx, q, 10)
	path := filepath.Join(t.TempDir(), "rows.f16")
	if err := WriteFP16Rows(path, base, dim); err != nil {
		t.Fatal(err)
	}
	r, err := OpenFP16Rows(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Len() != n || r.Dim() != dim {
		t.Fatalf("rows %d × %d, want %d × %d", r.Len(), r.Dim(), n, dim)
	}
	if err := h.RerankOn(r); err != nil {
		t.Fatal(err)
	}
	if v, c, _ := h.MemoryBytes(); v != 0 || c != n*dim+8*dim {
		t.Errorf("MemoryBytes vectors %d codes %d, want 0 and %d (codes + scales only)", v, c, n*dim+8*dim)
	}
	got, err := h.Search(ctx, q, 10)
	if err != nil {
		t.Fatal(err)
	}
	rRef, rGot := recallAt(ref, exact, 10), recallAt(got, exact, 10)
	t.Logf("recall@10 vs float32 exact: int8 traversal + fp32 re-rank %.4f, + fp16 re-rank %.4f", rRef, rGot)
	if rGot < rRef-0.005 || rGot < 0.9 {
		t.Errorf("recall@10 with fp16 re-rank %.4f, fp32 re-rank %.4f: fp16 rounding should cost < 0.005", rGot, rRef)
	}
	// Every score is q · fp16(row), accumulated in float32.
	buf := make([]float32, dim)
	for i, hs := range got {
		for _, hit := range hs {
			if want := dotF32(q[i*dim:(i+1)*dim], r.row(int(hit.Row), buf)); hit.Score != want {
				t.Fatalf("query %d row %d score %v, want q·fp16(row) %v", i, hit.Row, hit.Score, want)
			}
		}
	}
	if err := h.Add(ctx, base[:dim]); err == nil {
		t.Error("Add after RerankOn: no error")
	}
	if err := h.Save(filepath.Join(t.TempDir(), "g"), false); err == nil {
		t.Error("Save after RerankOn: no error")
	}
	// Bad uses.
	plain, _ := NewHNSW(ctx, base, dim, HNSWConfig{Seed: 1})
	if err := plain.RerankOn(r); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("RerankOn without int8 codes: %v, want ErrBadInput", err)
	}
	small, _ := NewHNSW(ctx, base[:100*dim], dim, HNSWConfig{Seed: 1, Int8: true})
	if err := small.RerankOn(r); !errors.Is(err, ErrDim) {
		t.Errorf("RerankOn with %d rows for a %d-node graph: %v, want ErrDim", n, 100, err)
	}
}

// TestOpenFP16RowsCorrupt checks that damaged files are refused by name.
func TestOpenFP16RowsCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if err := WriteFP16Rows(good, []float32{1, 2, 3, 4, 5, 6}, 3); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(good)
	for name, data := range map[string][]byte{
		"empty":     {},
		"short":     b[:20],
		"magic":     append([]byte("XXXXXXXX"), b[8:]...),
		"truncated": b[:len(b)-2],
		"longer":    append(append([]byte{}, b...), 0, 0),
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		if _, err := OpenFP16Rows(p); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	r, err := OpenFP16Rows(good)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.row(1, make([]float32, 3)); got[0] != 4 || got[2] != 6 {
		t.Errorf("row 1 = %v, want [4 5 6]", got)
	}
	if err := WriteFP16Rows(filepath.Join(dir, "bad"), []float32{1, 2}, 3); !errors.Is(err, ErrDim) {
		t.Errorf("WriteFP16Rows 2 values dim 3: %v, want ErrDim", err)
	}
}
