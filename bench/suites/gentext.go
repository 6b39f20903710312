package suites

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// Parameters of the "text-NxD" generator (GenTextVectors). Text embedding
// models (E5, bge) give unit vectors whose spectrum decays fast (a few
// dozen directions hold most of the variance), that share a common mean
// direction (cosines of unrelated passages ≈ 0.2–0.5) and that group into
// topics and subtopics; the isotropic "clustered-NxD" set has none of that
// at 768-d (its noise norm ≈ 4.2 against unit centres), so HNSW recall on
// it measures the generator. These constants are chosen so that a
// 50,000-vector set reaches recall@10 ≥ 0.95 at moderate efSearch with our
// HNSW and faiss (bench/results/2026-12-02-hnsw-1m/README.md).
type textParams struct {
	latent, topics, subtopics   int
	topicSD, subSD, pointSD     float64 // latent units, before the spectrum
	meanNorm, noiseSD, spectrum float64
}

// textDefault: 64 latent dimensions (the set's intrinsic dimension, ≤ D),
// 64 topics × 32 subtopics, centre spreads 1.0 / 0.55 and point spread
// 0.8 (latent units), latent dimension i scaled by (i+1)^-0.2, a common
// mean of norm 4 (random pairs then have cosine ≈ 0.3, as bge-base
// passages do), isotropic noise σ = 0.03 per ambient dimension (norm ≈
// 0.83 at 768-d against a latent signal of norm ≈ 6). Chosen among five
// candidates measured at 50,000 × 768 (bench/results/2026-12-02-hnsw-1m):
// the hardest of them for HNSW (recall@10 0.96 at efSearch 16; the others
// 0.99–1.00, easier than the real bge-base set's 0.93).
var textDefault = textParams{latent: 64, topics: 64, subtopics: 32, topicSD: 1.0, subSD: 0.55, pointSD: 0.8, meanNorm: 4, noiseSD: 0.03, spectrum: 0.2}

// textChunk is how many base rows are generated, written and searched at
// a time (a variable so that tests can cross chunk boundaries).
var textChunk = 65536

// textTruthK is the depth of the exact truth written (top-100 per query).
const textTruthK = 100

// textGen holds the generator's fixed parts: the orthonormal projection
// [D, latent], the spectrum, the mean, topic and subtopic centres.
type textGen struct {
	p      textParams
	seed   uint64
	dim, r int
	proj   []float64 // [dim, r]: column i is latent direction i in ambient space
	scale  []float64 // [r]
	mean   []float64 // [dim]
	sub    []float64 // [topics·subtopics, r]
}

func newTextGen(p textParams, seed uint64, dim int) *textGen {
	r := min(p.latent, dim)
	g := &textGen{p: p, seed: seed, dim: dim, r: r}
	rng := rand.New(rand.NewPCG(seed, 0x7e47))
	// Gram-Schmidt over Gaussian rows: r orthonormal directions in R^dim.
	rows := make([]float64, r*dim)
	for i := 0; i < r; i++ {
		row := rows[i*dim : (i+1)*dim]
		for {
			for j := range row {
				row[j] = rng.NormFloat64()
			}
			for k := 0; k < i; k++ {
				prev := rows[k*dim : (k+1)*dim]
				var d float64
				for j := range row {
					d += row[j] * prev[j]
				}
				for j := range row {
					row[j] -= d * prev[j]
				}
			}
			var s float64
			for _, x := range row {
				s += x * x
			}
			if s > 1e-6 {
				inv := 1 / math.Sqrt(s)
				for j := range row {
					row[j] *= inv
				}
				break
			}
		}
	}
	g.proj = make([]float64, dim*r)
	for i := 0; i < r; i++ {
		for j := 0; j < dim; j++ {
			g.proj[j*r+i] = rows[i*dim+j]
		}
	}
	g.scale = make([]float64, r)
	for i := range g.scale {
		g.scale[i] = math.Pow(float64(i+1), -p.spectrum)
	}
	g.mean = make([]float64, dim)
	var s float64
	for j := range g.mean {
		g.mean[j] = rng.NormFloat64()
		s += g.mean[j] * g.mean[j]
	}
	for j := range g.mean {
		g.mean[j] *= p.meanNorm / math.Sqrt(s)
	}
	g.sub = make([]float64, p.topics*p.subtopics*r)
	top := make([]float64, r)
	for t := 0; t < p.topics; t++ {
		for i := range top {
			top[i] = p.topicSD * rng.NormFloat64()
		}
		for u := 0; u < p.subtopics; u++ {
			c := g.sub[(t*p.subtopics+u)*r:][:r]
			for i := range c {
				c[i] = top[i] + p.subSD*rng.NormFloat64()
			}
		}
	}
	return g
}

// row writes generated row i (a base row for i < n, a query after) as a
// unit vector into dst[:dim]; z is [r] scratch. Row i depends only on the
// seed and i, so rows can be made in any order and in parallel.
func (g *textGen) row(i uint64, dst []float32, z []float64) {
	rng := rand.New(rand.NewPCG(g.seed^0x9e3779b97f4a7c15, i))
	c := g.sub[rng.IntN(g.p.topics*g.p.subtopics)*g.r:][:g.r]
	for k := range z {
		z[k] = (c[k] + g.p.pointSD*rng.NormFloat64()) * g.scale[k]
	}
	var s float64
	for j := 0; j < g.dim; j++ {
		v := g.mean[j] + g.p.noiseSD*rng.NormFloat64()
		for k, pk := range g.proj[j*g.r : (j+1)*g.r] {
			v += z[k] * pk
		}
		dst[j] = float32(v)
		s += v * v
	}
	inv := float32(1 / math.Sqrt(s))
	for j := range dst[:g.dim] {
		dst[j] *= inv
	}
}

// rows fills dst ([hi-lo, dim]) with rows [lo, hi) on all cores.
func (g *textGen) rows(dst []float32, lo, hi uint64) {
	w := uint64(runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for t := uint64(0); t < w; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			z := make([]float64, g.r)
			for i := lo + t; i < hi; i += w {
				g.row(i, dst[(i-lo)*uint64(g.dim):][:g.dim], z)
			}
		}()
	}
	wg.Wait()
}

// GenTextVectors writes the "text-NxD" set into dir (created): base.fvecs
// (n rows), query.fvecs (1,000 held-out rows of the same distribution:
// rows n..n+999 of the generator) and groundtruth.ivecs (per query the
// exact top-100 base rows by inner product: ann.Flat fp32 over the base in
// chunks of 65,536 rows, merged by descending score, ties by ascending
// row, as one exact search over the whole base gives). Each file is
// written atomically; files already complete for these parameters are
// kept (generation is deterministic in seed, n and dim). Progress lines go
// to logw. Memory: one chunk of base rows (256 MiB at 768-d) plus the
// queries and their running top-100.
func GenTextVectors(ctx context.Context, n, dim int, seed uint64, dir string, logw io.Writer) error {
	return genTextVectors(ctx, textDefault, n, dim, seed, dir, logw)
}

func genTextVectors(ctx context.Context, p textParams, n, dim int, seed uint64, dir string, logw io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	g := newTextGen(p, seed, dim)
	basePath, qPath, tPath := filepath.Join(dir, "base.fvecs"), filepath.Join(dir, "query.fvecs"), filepath.Join(dir, "groundtruth.ivecs")
	q := make([]float32, genQueries*dim)
	g.rows(q, uint64(n), uint64(n+genQueries))
	if fvecsComplete(basePath, n, dim) && fvecsComplete(qPath, genQueries, dim) && fileSize(tPath) == int64(genQueries*(4+4*textTruthK)) {
		return nil
	}
	if err := writeAtomic(qPath, func(w io.Writer) error { return writeFvecs(w, q, dim) }); err != nil {
		return err
	}
	// Base rows, streamed in chunks; the truth is merged chunk by chunk.
	chunk := textChunk
	best := make([][]rlsearch.Hit, genQueries)
	buf := make([]float32, chunk*dim)
	start := time.Now()
	err := writeAtomic(basePath, func(w io.Writer) error {
		for lo := 0; lo < n; lo += chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			hi := min(lo+chunk, n)
			rows := buf[:(hi-lo)*dim]
			g.rows(rows, uint64(lo), uint64(hi))
			if err := writeFvecs(w, rows, dim); err != nil {
				return err
			}
			f, err := ann.NewFlat(rows, dim, ann.FP32)
			if err != nil {
				return err
			}
			hits, err := f.Search(ctx, q, textTruthK)
			if err != nil {
				return err
			}
			for i, hs := range hits {
				for j := range hs {
					hs[j].Row += int32(lo)
				}
				best[i] = mergeTop(best[i], hs, textTruthK)
			}
			if logw != nil {
				el := time.Since(start).Seconds()
				fmt.Fprintf(logw, "text-%dx%d: %d / %d rows generated and searched (%.0fs, ~%.0fs left)\n", n, dim, hi, n, el, el/float64(hi)*float64(n-hi))
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	truth := make([][]int32, genQueries)
	for i, hs := range best {
		for _, h := range hs {
			truth[i] = append(truth[i], h.Row)
		}
	}
	return writeAtomic(tPath, func(w io.Writer) error {
		_, err := w.Write(ivecs(truth))
		return err
	})
}

// mergeTop merges two lists sorted by descending score (ties by ascending
// row) and keeps the first k.
func mergeTop(a, b []rlsearch.Hit, k int) []rlsearch.Hit {
	out := make([]rlsearch.Hit, 0, min(k, len(a)+len(b)))
	i, j := 0, 0
	for len(out) < k && (i < len(a) || j < len(b)) {
		if j >= len(b) || (i < len(a) && (a[i].Score > b[j].Score || (a[i].Score == b[j].Score && a[i].Row < b[j].Row))) {
			out = append(out, a[i])
			i++
		} else {
			out = append(out, b[j])
			j++
		}
	}
	return out
}

func writeAtomic(path string, fn func(io.Writer) error) error {
	return atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := fn(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

func writeFvecs(w io.Writer, v []float32, dim int) error {
	b := make([]byte, 4+4*dim)
	binary.LittleEndian.PutUint32(b, uint32(dim))
	for i := 0; i+dim <= len(v); i += dim {
		for j, x := range v[i : i+dim] {
			binary.LittleEndian.PutUint32(b[4+4*j:], math.Float32bits(x))
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

func fvecsComplete(path string, n, dim int) bool {
	return fileSize(path) == int64(n)*int64(4+4*dim)
}

// readFvecsN streams an .fvecs file of n rows of dim into one slice (no
// second copy of the file in memory, unlike readVecs).
func readFvecsN(path string, n, dim int) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	out := make([]float32, n*dim)
	b := make([]byte, 4+4*dim)
	for i := 0; i < n; i++ {
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("suites: %s: row %d: %w", path, i, err)
		}
		if d := int(binary.LittleEndian.Uint32(b)); d != dim {
			return nil, fmt.Errorf("suites: %s: row %d has dimension %d, want %d", path, i, d, dim)
		}
		row := out[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4+4*j:]))
		}
	}
	return out, nil
}
