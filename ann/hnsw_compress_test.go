package ann

import (
	"context"
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestHNSWCompress checks Compress: recall@10 against float32 exact stays
// at the level of the float32 graph, answers do not depend on batching,
// a second graph over the same vectors reuses the rows file and answers
// bit for bit the same, and a stale, truncated or damaged file is refused
// naming the path (the documented choice: never rewritten in place).
func TestHNSWCompress(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(12))
	for _, dim := range []int{1, 3, 33, 96} {
		const n, nq = 3000, 100
		vecs := clustered(rng, n+nq, dim, 30, 0.2)
		base, q := vecs[:n*dim], vecs[n*dim:]
		flat, _ := NewFlat(base, dim, FP32)
		exact, _ := flat.Search(ctx, q, 10)
		cfg := HNSWConfig{M: 12, EfConstruction: 80, EfSearch: 64, Seed: 3}
		plain, err := NewHNSW(ctx, base, dim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := plain.Search(ctx, q, 10)
		dir := t.TempDir()
		graph := filepath.Join(dir, "g")
		if err := plain.Save(graph, false); err != nil {
			t.Fatal(err)
		}
		rows := filepath.Join(dir, "rows.f16")
		h, _ := NewHNSW(ctx, base, dim, cfg)
		if reused, err := h.Compress(rows); err != nil || reused {
			t.Fatalf("dim %d: first Compress: reused %v, %v; want a new file", dim, reused, err)
		}
		if !h.Compressed() || h.RerankRows() != rows || !h.Config().Int8 {
			t.Fatalf("dim %d: Compressed %v RerankRows %q Int8 %v", dim, h.Compressed(), h.RerankRows(), h.Config().Int8)
		}
		if v, c, _ := h.MemoryBytes(); v != 0 || c != n*dim+8*dim {
			t.Errorf("dim %d: MemoryBytes vectors %d codes %d, want 0 and %d", dim, v, c, n*dim+8*dim)
		}
		got, err := h.Search(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		rRef, rGot := recallAt(ref, exact, 10), recallAt(got, exact, 10)
		t.Logf("dim %d: recall@10 vs float32 exact: float32 graph %.4f, compressed %.4f", dim, rRef, rGot)
		if rGot < rRef-0.02 || (dim > 1 && rGot < 0.85) { // dim 1: unit vectors are ±1, all ties
			t.Errorf("dim %d: compressed recall@10 %.4f, float32 graph %.4f", dim, rGot, rRef)
		}
		// Batch independence: each query alone gets its list in the batch.
		for i := 0; i < nq; i += 17 {
			one, _ := h.Search(ctx, q[i*dim:(i+1)*dim], 10)
			if !reflect.DeepEqual(one[0], got[i]) {
				t.Fatalf("dim %d query %d: alone %v, in a batch %v", dim, i, one[0], got[i])
			}
		}
		// Same codes as a graph built with Int8 (fitted over the same vectors).
		h8, _ := NewHNSW(ctx, base, dim, HNSWConfig{M: 12, EfConstruction: 80, EfSearch: 64, Seed: 3, Int8: true})
		if !reflect.DeepEqual(h8.codes, h.codes) || !reflect.DeepEqual(h8.scale, h.scale) {
			t.Errorf("dim %d: streamed codes differ from HNSWConfig.Int8's", dim)
		}
		// A loaded graph over the shard reuses the file, same answers.
		shard, _ := NewFlat(base, dim, FP32)
		h2, err := LoadHNSWShared(graph, shard)
		if err != nil {
			t.Fatal(err)
		}
		if reused, err := h2.Compress(rows); err != nil || !reused {
			t.Fatalf("dim %d: second Compress: reused %v, %v; want the file reused", dim, reused, err)
		}
		got2, _ := h2.Search(ctx, q, 10)
		if !reflect.DeepEqual(got, got2) {
			t.Errorf("dim %d: a second compressed open answers differently", dim)
		}
		if _, err := h2.Compress(rows); err == nil {
			t.Errorf("dim %d: Compress twice: no error", dim)
		}
		h.Close()
		h2.Close()
		if _, err := h.Search(ctx, q[:dim], 10); err == nil {
			t.Errorf("dim %d: Search after Close: no error", dim)
		}
	}
}

// TestHNSWCompressRefuses: a rows file for other vectors, a truncated one
// and one with a flipped byte are refused by name, and left in place.
func TestHNSWCompressRefuses(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(13))
	const n, dim = 500, 16
	base := clustered(rng, n, dim, 10, 0.2)
	dir := t.TempDir()
	rows := filepath.Join(dir, "rows.f16")
	h, _ := NewHNSW(ctx, base, dim, HNSWConfig{M: 8, Seed: 1})
	if _, err := h.Compress(rows); err != nil {
		t.Fatal(err)
	}
	h.Close()
	good, _ := os.ReadFile(rows)
	other := clustered(rng, n, dim, 10, 0.2)
	for _, tc := range []struct {
		name string
		data []byte
		vecs []float32
		want error
		msg  string
	}{
		{"other vectors", good, other, ErrStaleRows, "holds other vectors"},
		{"other count", good, base[:(n-1)*dim], ErrStaleRows, "499 × 16"},
		{"truncated", good[:len(good)-2], base, ErrCorrupt, "truncated"},
		{"header only", good[:rows16Header], base, ErrCorrupt, "truncated"},
		{"short header", good[:10], base, ErrCorrupt, "header"},
		{"flipped row byte", flip(good, len(good)-1), base, ErrCorrupt, "rows checksum"},
		{"flipped header byte", flip(good, 9), base, ErrCorrupt, "header checksum"},
		{"old magic", append([]byte("RLSF16R1"), good[8:]...), base, ErrCorrupt, "bad magic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "rows.f16")
			os.WriteFile(p, tc.data, 0o644)
			g, _ := NewHNSW(ctx, tc.vecs, dim, HNSWConfig{M: 8, Seed: 1})
			_, err := g.Compress(p)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "delete it") {
				t.Fatalf("error %v, want %v naming %s, %q and how to fix it", err, tc.want, p, tc.msg)
			}
			if g.Compressed() {
				t.Fatal("compressed after a refused file")
			}
			if b, _ := os.ReadFile(p); string(b) != string(tc.data) {
				t.Fatal("the refused file was changed")
			}
			// The graph still serves uncompressed.
			if _, err := g.Search(ctx, tc.vecs[:dim], 3); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0x40
	return c
}

// FuzzOpenFP16Rows: any file is refused with ErrCorrupt or opened with a
// shape that matches its size; Check and row reads never panic.
func FuzzOpenFP16Rows(f *testing.F) {
	dir := f.TempDir()
	for i, v := range [][]float32{{1, 2, 3, 4, 5, 6}, {}, {0.5}} {
		p := filepath.Join(dir, "s"+string(rune('0'+i)))
		dim := 3
		if len(v) == 1 {
			dim = 1
		}
		if err := WriteFP16Rows(p, v, dim); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "r")
		os.WriteFile(p, data, 0o644)
		r, err := OpenFP16Rows(p)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		defer r.Close()
		if int64(rows16Header)+2*int64(r.Len())*int64(r.Dim()) != int64(len(data)) {
			t.Fatalf("%d × %d rows in %d bytes", r.Len(), r.Dim(), len(data))
		}
		if err := r.Check(); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatal(err)
		}
		if r.Len() > 0 {
			r.row(r.Len()-1, make([]float32, r.Dim()))
		}
	})
}

// TestOpenCompressed: Config.HNSWCompressed builds (then loads) the graph,
// writes the fp16 rows beside the shard once and reuses them, serves
// exact flat search over the mapped rows as Opened.Flat, and answers the
// same on both opens.
func TestOpenCompressed(t *testing.T) {
	for _, dt := range []DType{FP32, FP16, INT8} {
		t.Run(dt.String(), func(t *testing.T) { testOpenCompressed(t, dt) })
	}
}

func testOpenCompressed(t *testing.T, dt DType) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(21))
	const n, dim, nq = 2000, 32, 50
	vecs := clustered(rng, n+nq, dim, 20, 0.2)
	q := vecs[n*dim:]
	dir := t.TempDir()
	path := writeVectorFile(t, dir, vecs[:n*dim], dim, Header{DType: dt}, nil)
	exactF, _ := NewFlat(vecs[:n*dim], dim, FP32)
	exact, _ := exactF.Search(ctx, q, 10)
	floor := map[DType]float64{FP32: 0.95, FP16: 0.95, INT8: 0.9}[dt]
	cfg := Config{Path: path, Backend: BackendHNSW, HNSWPath: filepath.Join(dir, "g.hnsw"), HNSW: HNSWConfig{M: 12, Seed: 1}, HNSWCompressed: true}
	var first [][]rlsearchHit
	for i, how := range []string{"written", "reused"} {
		o, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := o.Index.(*HNSW)
		if !h.Compressed() || h.RerankRows() != path+".f16" || !strings.Contains(o.Reason, "compressed: fp16 re-rank from "+path+".f16 ("+how) {
			t.Fatalf("open %d: compressed %v rows %q, reason %q; want %s", i, h.Compressed(), h.RerankRows(), o.Reason, how)
		}
		if fh := o.Flat.Header(); fh.DType != FP16 || fh.Count != n || fh.EncoderID != "tiny" {
			t.Fatalf("open %d: Opened.Flat header %+v, want the fp16 rows with the shard's encoder", i, fh)
		}
		got, err := o.Search(ctx, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if r := recallAt(got, exact, 10); r < floor {
			t.Errorf("open %d: recall@10 %.3f against fp32 exact, want ≥ %.2f", i, r, floor)
		}
		ex, _ := o.Flat.Search(ctx, q, 10)
		if r := recallAt(ex, exact, 10); r < floor+0.04 {
			t.Errorf("open %d: Opened.Flat (fp16 rows) recall@10 %.3f against fp32 exact", i, r)
		}
		rows := hitRows(got)
		if first == nil {
			first = rows
		} else if !reflect.DeepEqual(rows, first) {
			t.Errorf("open %d answers differently from open 0", i)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if dt != FP32 {
		return
	}
	if _, err := Open(ctx, Config{Flat: exactF, Backend: BackendHNSW, HNSWCompressed: true}); err == nil || !strings.Contains(err.Error(), "Config.FP16RowsPath") {
		t.Errorf("compressed over Config.Flat without FP16RowsPath: %v, want an error naming Config.FP16RowsPath", err)
	}
	// flat ignores the flag and writes nothing.
	os.Remove(path + ".f16")
	o, err := Open(ctx, Config{Path: path, Backend: BackendFlat, HNSWCompressed: true})
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if _, err := os.Stat(path + ".f16"); err == nil {
		t.Error("flat backend wrote an fp16 rows file")
	}
}

type rlsearchHit = struct {
	Row   int32
	Score float32
}

func hitRows(hits [][]rlsearch.Hit) [][]rlsearchHit {
	out := make([][]rlsearchHit, len(hits))
	for i, hs := range hits {
		for _, h := range hs {
			out[i] = append(out[i], rlsearchHit{h.Row, h.Score})
		}
	}
	return out
}

// TestOpenCompressedStream: with a saved graph, a compressed open streams
// the shard instead of reading it (openCompressedStream). Its rows file is
// byte-identical to the in-memory path's, its answers and ids equal, and a
// stale rows file is refused on this path too.
func TestOpenCompressedStream(t *testing.T) {
	ctx := context.Background()
	for _, dt := range []DType{FP32, FP16, INT8} {
		t.Run(dt.String(), func(t *testing.T) {
			rng := rand.New(rand.NewSource(22))
			const n, dim, nq = 1500, 24, 40
			vecs := clustered(rng, n+nq, dim, 20, 0.2)
			q := vecs[n*dim:]
			ids := make([]int64, n)
			for i := range ids {
				ids[i] = int64(1000 + 3*i)
			}
			dir := t.TempDir()
			path := writeVectorFile(t, dir, vecs[:n*dim], dim, Header{DType: dt, BlockRows: 256}, ids)
			graph := filepath.Join(dir, "g.hnsw")
			cfg := Config{Path: path, Backend: BackendHNSW, HNSWPath: graph, HNSW: HNSWConfig{M: 10, Seed: 2}, HNSWCompressed: true}
			mem, err := Open(ctx, cfg) // builds: the in-memory path
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(mem.Reason, "streamed") {
				t.Fatalf("first open streamed: %s", mem.Reason)
			}
			want, _ := mem.Search(ctx, q, 10)
			wantRows, _ := os.ReadFile(path + ".f16")
			mem.Close()
			os.Remove(path + ".f16")
			for _, how := range []string{"written", "reused"} {
				o, err := Open(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(o.Reason, "vector file streamed") || !strings.Contains(o.Reason, "("+how+",") {
					t.Fatalf("%s: reason %q", how, o.Reason)
				}
				got, err := o.Search(ctx, q, 10)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: streamed open answers differ from the in-memory open", how)
				}
				if b, _ := os.ReadFile(path + ".f16"); string(b) != string(wantRows) {
					t.Errorf("%s: rows file differs from the in-memory path's", how)
				}
				if !reflect.DeepEqual(o.Flat.IDs(), ids) || o.Flat.Header().DType != FP16 || o.Flat.Len() != n {
					t.Errorf("%s: Opened.Flat ids/header %v / %+v", how, o.Flat.IDs()[:3], o.Flat.Header())
				}
				o.Close()
			}
			// Stale rows (another shard's) are refused here too.
			other := writeVectorFile(t, t.TempDir(), clustered(rng, n, dim, 20, 0.2), dim, Header{DType: dt}, nil)
			WriteFP16Rows(other+".f16", clustered(rng, n, dim, 20, 0.2), dim)
			if _, err := Open(ctx, Config{Path: other, Backend: BackendHNSW, HNSWPath: graph, HNSWCompressed: true}); !errors.Is(err, ErrStaleRows) {
				t.Errorf("stale rows on the streamed path: %v, want ErrStaleRows", err)
			}
		})
	}
}

// TestOpenFP16RowsDirectory: a directory where the rows file should be is
// refused by name, not read as an empty file.
func TestOpenFP16RowsDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenFP16Rows(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("OpenFP16Rows(directory) = %v, want a not-a-regular-file error", err)
	}
}

// TestHNSWTraverseInt8 checks TraverseInt8: a float32 graph given codes
// answers bit for bit as the same graph built with HNSWConfig.Int8 (same
// graph, same codes), keeps exact float32 scores, works over a shared fp16
// shard, and refuses a compressed graph.
func TestHNSWTraverseInt8(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(31))
	const n, dim = 1500, 40
	vecs := clustered(rng, n, dim, 25, 0.25)
	q := clustered(rng, 60, dim, 25, 0.25)
	h, err := NewHNSW(ctx, vecs, dim, HNSWConfig{M: 8, Seed: 2, EfSearch: 40})
	if err != nil {
		t.Fatal(err)
	}
	built, err := NewHNSW(ctx, vecs, dim, HNSWConfig{M: 8, Seed: 2, EfSearch: 40, Int8: true})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := h.Search(ctx, q, 10)
	if err := h.TraverseInt8(); err != nil {
		t.Fatal(err)
	}
	if err := h.TraverseInt8(); err != nil { // a no-op the second time
		t.Fatal(err)
	}
	if !h.Config().Int8 || h.codes == nil {
		t.Fatal("TraverseInt8 left the graph without codes")
	}
	got, _ := h.Search(ctx, q, 10)
	want, _ := built.Search(ctx, q, 10)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("TraverseInt8 answers differ from a graph built with HNSWConfig.Int8")
	}
	flat, _ := NewFlat(vecs, dim, FP32)
	exact, _ := flat.Search(ctx, q, 10)
	for qi, hs := range got {
		for _, x := range hs {
			if w := dotF32(q[qi*dim:(qi+1)*dim], vecs[int(x.Row)*dim:(int(x.Row)+1)*dim]); x.Score != w {
				t.Fatalf("query %d row %d: score %v, float32 exact %v", qi, x.Row, x.Score, w)
			}
		}
	}
	if r, r0 := recallAt(got, exact, 10), recallAt(plain, exact, 10); r < r0-0.02 {
		t.Fatalf("recall@10 %.3f with int8 traversal, %.3f without", r, r0)
	}
	// Over a shared fp16 shard: codes fitted over its widened rows,
	// scores those of exact search over the shard.
	f16, _ := NewFlat(vecs, dim, FP16)
	hs, _ := NewHNSW(ctx, vecs, dim, HNSWConfig{M: 8, Seed: 2, EfSearch: 40})
	if err := hs.ShareVectors(f16); err != nil {
		t.Fatal(err)
	}
	if err := hs.TraverseInt8(); err != nil {
		t.Fatal(err)
	}
	gs, _ := hs.Search(ctx, q, 10)
	es, _ := f16.Search(ctx, q, 10)
	if r := recallAt(gs, es, 10); r < 0.9 {
		t.Fatalf("recall@10 over the fp16 shard %.3f", r)
	}
	c, _ := NewHNSW(ctx, vecs, dim, HNSWConfig{M: 8, Seed: 2})
	if _, err := c.Compress(filepath.Join(t.TempDir(), "r.f16")); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TraverseInt8(); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Fatalf("TraverseInt8 of a compressed graph: %v, want ErrBadInput", err)
	}
}
