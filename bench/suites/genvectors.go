package suites

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/rlsearch/rlsearch/bench"
)

// genName is a generated vector set's name: "uniform-NxD" or
// "clustered-NxD" (for example clustered-100000x384).
var genName = regexp.MustCompile(`^(uniform|clustered)-([0-9]+)x([0-9]+)$`)

// genQueries is the number of queries of a generated set.
const genQueries = 1000

// GenVectorSet makes the named synthetic set with seed: "uniform" draws
// unit vectors from an isotropic Gaussian; "clustered" puts them around 300
// random unit centres with Gaussian noise of σ = 0.15 per dimension before
// normalising (as bench/ann/compare.py does); 1,000 queries from the same
// distribution; exact inner-product top-10 truth. When dir is not empty the
// set is also written there as base.fvecs, query.fvecs and
// groundtruth.ivecs (for peers that cannot rerun the generator), or read
// from there when already written.
func GenVectorSet(ctx context.Context, name string, seed uint64, dir string) (*VectorSet, error) {
	m := genName.FindStringSubmatch(name)
	if m == nil {
		return nil, fmt.Errorf("%w: vector set %q: want uniform-NxD or clustered-NxD", errConfig, name)
	}
	n, _ := strconv.Atoi(m[2])
	dim, _ := strconv.Atoi(m[3])
	if n < 1 || dim < 1 || n > 50_000_000 || dim > 4096 {
		return nil, fmt.Errorf("%w: vector set %q: n in [1, 5e7], dim in [1, 4096]", errConfig, name)
	}
	note := fmt.Sprintf("generated %s unit vectors (seed %d), %d queries from the same distribution, exact truth", m[1], seed, genQueries)
	if dir != "" {
		if base, d1, err := readVecs(filepath.Join(dir, "base.fvecs"), false); err == nil && d1 == dim && len(base) == n*dim {
			q, d2, err1 := readVecs(filepath.Join(dir, "query.fvecs"), false)
			truth, err2 := readIvecs(filepath.Join(dir, "groundtruth.ivecs"), 10)
			if err1 == nil && err2 == nil && d2 == dim && len(truth) == len(q)/dim {
				return &VectorSet{Name: name, Dim: dim, N: n, NQ: len(q) / dim, Base: base, Queries: q, Truth: truth, Note: note}, nil
			}
		}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(n)*31+uint64(dim)))
	total := n + genQueries
	x := make([]float32, total*dim)
	if m[1] == "uniform" {
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
	} else {
		const centres = 300
		c := make([]float32, centres*dim)
		for i := range c {
			c[i] = float32(rng.NormFloat64())
		}
		normalize(c, dim)
		for i := 0; i < total; i++ {
			ci := rng.IntN(centres)
			for j := 0; j < dim; j++ {
				x[i*dim+j] = c[ci*dim+j] + float32(0.15*rng.NormFloat64())
			}
		}
	}
	normalize(x, dim)
	vs := &VectorSet{Name: name, Dim: dim, N: n, NQ: genQueries, Base: x[:n*dim], Queries: x[n*dim:], Note: note}
	var err error
	if vs.Truth, err = exactTruth(ctx, vs.Base, vs.Queries, dim, 10); err != nil {
		return nil, err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		for f, data := range map[string][]byte{"base.fvecs": fvecs(vs.Base, dim), "query.fvecs": fvecs(vs.Queries, dim), "groundtruth.ivecs": ivecs(vs.Truth)} {
			if err := bench.WriteFileAtomic(filepath.Join(dir, f), data); err != nil {
				return nil, err
			}
		}
	}
	return vs, nil
}

// fvecs encodes [n, dim] rows as TEXMEX .fvecs.
func fvecs(v []float32, dim int) []byte {
	var b bytes.Buffer
	b.Grow(len(v)/dim*4 + len(v)*4)
	var w [4]byte
	for i := 0; i < len(v); i += dim {
		binary.LittleEndian.PutUint32(w[:], uint32(dim))
		b.Write(w[:])
		for _, x := range v[i : i+dim] {
			binary.LittleEndian.PutUint32(w[:], math.Float32bits(x))
			b.Write(w[:])
		}
	}
	return b.Bytes()
}

// ivecs encodes id rows as TEXMEX .ivecs.
func ivecs(rows [][]int32) []byte {
	var b bytes.Buffer
	var w [4]byte
	for _, r := range rows {
		binary.LittleEndian.PutUint32(w[:], uint32(len(r)))
		b.Write(w[:])
		for _, x := range r {
			binary.LittleEndian.PutUint32(w[:], uint32(x))
			b.Write(w[:])
		}
	}
	return b.Bytes()
}
