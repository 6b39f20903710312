package suites

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/rlsearch/rlsearch/bench"
)

// genName is a generated vector set's name: "uniform-NxD",
// "clustered-NxD" (for example clustered-100000x384) or "text-NxD"
// (GenTextVectors, for example text-1000000x768).
var genName = regexp.MustCompile(`^(uniform|clustered|text)-([0-9]+)x([0-9]+)$`)

// genQueries is the number of queries of a generated set.
const genQueries = 1000

// GenVectorSet makes the named synthetic set with seed: "uniform" draws
// unit vectors from an isotropic Gaussian; "clustered" puts them around 300
// random unit centres with Gaussian noise of σ = 0.15 per dimension before
// normalising (as bench/ann/compare.py does); "text" has the structure of
// text embeddings (GenTextVectors: low intrinsic dimension, hierarchical
// clusters, a common mean, unit length) and is always generated through
// files (a temporary directory when dir is ""); 1,000 queries from the same
// distribution; exact inner-product top-10 truth (text: top-100 on disk). When dir is not empty the
// set is also written there as base.fvecs, query.fvecs and
// groundtruth.ivecs (for peers that cannot rerun the generator), or read
// from there when already written.
func GenVectorSet(ctx context.Context, name string, seed uint64, dir string) (*VectorSet, error) {
	return genVectorSet(ctx, name, seed, dir, nil)
}

// genVectorSet is GenVectorSet with progress lines of the text generator
// to logw (nil: none).
func genVectorSet(ctx context.Context, name string, seed uint64, dir string, logw io.Writer) (*VectorSet, error) {
	m := genName.FindStringSubmatch(name)
	if m == nil {
		return nil, fmt.Errorf("%w: vector set %q: want uniform-NxD, clustered-NxD or text-NxD", errConfig, name)
	}
	n, _ := strconv.Atoi(m[2])
	dim, _ := strconv.Atoi(m[3])
	if n < 1 || dim < 1 || n > 50_000_000 || dim > 4096 {
		return nil, fmt.Errorf("%w: vector set %q: n in [1, 5e7], dim in [1, 4096]", errConfig, name)
	}
	if m[1] == "text" {
		return genTextSet(ctx, name, n, dim, seed, dir, logw)
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

// genTextSet makes (or reads back) the text-NxD set in dir.
func genTextSet(ctx context.Context, name string, n, dim int, seed uint64, dir string, logw io.Writer) (*VectorSet, error) {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "text-vectors-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := GenTextVectors(ctx, n, dim, seed, dir, logw); err != nil {
		return nil, fmt.Errorf("suites: %s: %w", name, err)
	}
	base, err := readFvecsN(filepath.Join(dir, "base.fvecs"), n, dim)
	if err != nil {
		return nil, err
	}
	q, err := readFvecsN(filepath.Join(dir, "query.fvecs"), genQueries, dim)
	if err != nil {
		return nil, err
	}
	truth, err := readIvecs(filepath.Join(dir, "groundtruth.ivecs"), 10)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("generated text-embedding-like unit vectors (seed %d: %d-d latent Gaussian mixture, %d topics × %d subtopics, decaying spectrum, common mean, isotropic noise σ = %g), %d held-out queries of the same distribution, exact top-%d truth by fp32 flat search", seed, min(textDefault.latent, dim), textDefault.topics, textDefault.subtopics, textDefault.noiseSD, genQueries, textTruthK)
	return &VectorSet{Name: name, Dim: dim, N: n, NQ: genQueries, Base: base, Queries: q, Truth: truth, Note: note}, nil
}
