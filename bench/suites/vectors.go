package suites

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rlsearch/rlsearch/ann"
)

// VectorSet is a real vector dataset from ../shared/data/vectors, ready for
// inner-product search: Base is [N, Dim] and Queries [NQ, Dim], row-major;
// Truth holds the exact top-10 base rows of every query by inner product.
type VectorSet struct {
	Name          string
	Dim, N, NQ    int
	Base, Queries []float32
	Truth         [][]int32
	Note          string
}

// vectorSets are the datasets of the flat and hnsw suites, in order. The
// uint8 L2 sets are L2-normalised so that inner product ranks as cosine
// (as bench/ann/compare.py does), and their truth is recomputed exactly.
var vectorSets = []struct {
	name, dir, base, query, truth, note string
	bytes                               bool
}{
	{"bge-base", "beir_bge_base_queries", "base.fvecs", "query.fvecs", "groundtruth_ip_top100.ivecs",
		"real bge-base-en-v1.5 query embeddings (BEIR), 768-d unit vectors, inner product; truth from the dataset", false},
	{"sift10k", "bigann10k", "base.bvecs", "query.bvecs", "",
		"SIFT (bigann) uint8 128-d, L2-normalised, cosine; truth recomputed exactly", true},
	{"fmnist", "fashion_mnist", "base.bvecs", "query.bvecs", "",
		"Fashion-MNIST uint8 784-d, L2-normalised, cosine; truth recomputed exactly", true},
}

// VectorSetNames lists the vector datasets the suites know.
func VectorSetNames() []string {
	out := make([]string, len(vectorSets))
	for i, v := range vectorSets {
		out[i] = v.name
	}
	return out
}

// LoadVectorSet reads the named set from dataDir/vectors. maxN (> 0) keeps
// only the first maxN base rows and maxQ (> 0) the first maxQ queries; the
// truth is then recomputed exactly over the kept rows.
func LoadVectorSet(ctx context.Context, dataDir, name string, maxN, maxQ int) (*VectorSet, error) {
	for _, v := range vectorSets {
		if v.name != name {
			continue
		}
		dir := filepath.Join(dataDir, "vectors", v.dir)
		base, dim, err := readVecs(filepath.Join(dir, v.base), v.bytes)
		if err != nil {
			return nil, err
		}
		q, qdim, err := readVecs(filepath.Join(dir, v.query), v.bytes)
		if err != nil {
			return nil, err
		}
		if qdim != dim {
			return nil, fmt.Errorf("suites: %s: query dim %d, base dim %d", name, qdim, dim)
		}
		if v.bytes {
			normalize(base, dim)
			normalize(q, dim)
		}
		n, nq := len(base)/dim, len(q)/dim
		trunc := false
		if maxN > 0 && maxN < n {
			base, n, trunc = base[:maxN*dim], maxN, true
		}
		if maxQ > 0 && maxQ < nq {
			q, nq = q[:maxQ*dim], maxQ
		}
		vs := &VectorSet{Name: name, Dim: dim, N: n, NQ: nq, Base: base, Queries: q, Note: v.note}
		if v.truth != "" && !trunc {
			t, err := readIvecs(filepath.Join(dir, v.truth), 10)
			if err != nil {
				return nil, err
			}
			if len(t) < nq {
				return nil, fmt.Errorf("suites: %s: truth has %d rows for %d queries", name, len(t), nq)
			}
			vs.Truth = t[:nq]
		} else if vs.Truth, err = exactTruth(ctx, base, q, dim, 10); err != nil {
			return nil, err
		}
		return vs, nil
	}
	return nil, fmt.Errorf("%w: unknown vector set %q (have %v)", errConfig, name, VectorSetNames())
}

// exactTruth is the top-k by inner product with exact fp32 flat search.
func exactTruth(ctx context.Context, base, q []float32, dim, k int) ([][]int32, error) {
	f, err := ann.NewFlat(base, dim, ann.FP32)
	if err != nil {
		return nil, err
	}
	hits, err := f.Search(ctx, q, k)
	if err != nil {
		return nil, err
	}
	out := make([][]int32, len(hits))
	for i, hs := range hits {
		for _, h := range hs {
			out[i] = append(out[i], h.Row)
		}
	}
	return out, nil
}

func normalize(v []float32, dim int) {
	for i := 0; i+dim <= len(v); i += dim {
		var s float64
		for _, x := range v[i : i+dim] {
			s += float64(x) * float64(x)
		}
		if s == 0 {
			continue
		}
		inv := float32(1 / math.Sqrt(s))
		for j := i; j < i+dim; j++ {
			v[j] *= inv
		}
	}
}

// readVecs reads TEXMEX .fvecs (float32) or .bvecs (uint8) rows: per row a
// little-endian int32 dimension, then the values.
func readVecs(path string, bytesVals bool) ([]float32, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	if len(b) < 4 {
		return nil, 0, fmt.Errorf("suites: %s: empty vector file", path)
	}
	dim := int(binary.LittleEndian.Uint32(b))
	w := 4
	if bytesVals {
		w = 1
	}
	row := 4 + w*dim
	if dim <= 0 || dim > 1<<16 || len(b)%row != 0 {
		return nil, 0, fmt.Errorf("suites: %s: size %d is not a multiple of the row size %d (dim %d)", path, len(b), row, dim)
	}
	out := make([]float32, 0, len(b)/row*dim)
	for off := 0; off < len(b); off += row {
		if d := int(binary.LittleEndian.Uint32(b[off:])); d != dim {
			return nil, 0, fmt.Errorf("suites: %s: row at byte %d has dimension %d, want %d", path, off, d, dim)
		}
		for j := 0; j < dim; j++ {
			if bytesVals {
				out = append(out, float32(b[off+4+j]))
			} else {
				out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(b[off+4+4*j:])))
			}
		}
	}
	return out, dim, nil
}

// readIvecs reads the first k ids of every row of a TEXMEX .ivecs file.
func readIvecs(path string, k int) ([][]int32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]int32
	for off := 0; off < len(b); {
		if off+4 > len(b) {
			return nil, fmt.Errorf("suites: %s: truncated at byte %d", path, off)
		}
		d := int(binary.LittleEndian.Uint32(b[off:]))
		if d < 0 || off+4+4*d > len(b) {
			return nil, fmt.Errorf("suites: %s: row at byte %d claims %d ids past the end", path, off, d)
		}
		row := make([]int32, 0, min(d, k))
		for j := 0; j < min(d, k); j++ {
			row = append(row, int32(binary.LittleEndian.Uint32(b[off+4+4*j:])))
		}
		out = append(out, row)
		off += 4 + 4*d
	}
	return out, nil
}

// recallAt is the mean over queries of |top-k ∩ truth-k| / |truth-k|.
func recallAt(rows [][]int32, truth [][]int32, k int) float64 {
	if len(rows) == 0 {
		return 0
	}
	var s float64
	for i, got := range rows {
		want := map[int32]bool{}
		for _, r := range truth[i][:min(k, len(truth[i]))] {
			want[r] = true
		}
		if len(want) == 0 {
			continue
		}
		found := 0
		for _, r := range got[:min(k, len(got))] {
			if want[r] {
				found++
			}
		}
		s += float64(found) / float64(len(want))
	}
	return s / float64(len(rows))
}
