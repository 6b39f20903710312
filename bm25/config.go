package bm25

import (
	"errors"
	"fmt"
	"math"
)

// Default BM25 parameters: Pyserini's defaults for its prebuilt Lucene
// indexes (pyserini.search.lucene.LuceneSearcher.set_bm25: k1=0.9, b=0.4).
// Lucene's own defaults are k1=1.2, b=0.75.
const (
	DefaultK1 = 0.9
	DefaultB  = 0.4
)

// DefaultMemoryBudget is the Builder's default bound on the memory of its
// in-memory postings (1 GiB): about 4 million passages of ~100 words
// between two spills, so that wiki-18 (21M passages) builds in about 5-6
// sorted runs.
const DefaultMemoryBudget = 1 << 30

// Config configures a Builder. The zero value is valid and means Pyserini's
// defaults. The BM25 parameters are written into the index file, so an
// Index scores with the parameters its builder had; the other fields only
// change how the file is built, never its bytes.
type Config struct {
	// K1 is BM25's term-frequency saturation, k1 >= 0; nil means
	// DefaultK1 (0.9). k1 = 0 scores every matching term by its idf alone.
	// With Go 1.26: Config{K1: new(1.2)}.
	K1 *float64
	// B is BM25's length normalisation, 0 <= b <= 1; nil means DefaultB
	// (0.4). b = 0 turns length normalisation off.
	B *float64

	// MemoryBudget bounds, in bytes, the estimated memory of the postings
	// and dictionary the Builder holds; past it the Builder spills a sorted
	// run to a temporary file in TempDir, and WriteFile merges the runs.
	// 0 means DefaultMemoryBudget (1 GiB). Outside the budget the Builder
	// keeps 4 bytes per document (its length) and a bounded pipeline of
	// documents being analyzed (a few MiB). The budget counts live bytes:
	// with the default GOGC=100 the Go heap, and so the RSS, can reach
	// about twice it (measured: 1 GiB budget, 5M passages, 1.6 GB peak RSS).
	MemoryBudget int64
	// TempDir is where spilled runs and WriteFile's side files go; "" means
	// os.TempDir(). Put it on the same (large, local) disk as the output:
	// the runs together are about the size of the finished index.
	TempDir string
	// Workers is the number of goroutines that analyze documents (UAX#29
	// segmentation, Porter stemming) for Builder.Add; 0 means
	// runtime.GOMAXPROCS(0). Rows and the file do not depend on it.
	Workers int
}

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("bm25: bad config")

// Validate reports a bad field: K1 must be finite and >= 0, B finite and in
// [0, 1], MemoryBudget and Workers >= 0.
func (c Config) Validate() error {
	if c.K1 != nil {
		if k1 := *c.K1; math.IsNaN(k1) || math.IsInf(k1, 0) || k1 < 0 || k1 > math.MaxFloat32 {
			return fmt.Errorf("%w: K1 = %v, want a finite value >= 0", ErrConfig, k1)
		}
	}
	if c.B != nil {
		if b := *c.B; math.IsNaN(b) || b < 0 || b > 1 {
			return fmt.Errorf("%w: B = %v, want 0 <= B <= 1", ErrConfig, b)
		}
	}
	if c.MemoryBudget < 0 {
		return fmt.Errorf("%w: MemoryBudget = %d, want >= 0 bytes (0 = %d)", ErrConfig, c.MemoryBudget, DefaultMemoryBudget)
	}
	if c.Workers < 0 {
		return fmt.Errorf("%w: Workers = %d, want >= 0 (0 = GOMAXPROCS)", ErrConfig, c.Workers)
	}
	return nil
}

// params returns k1 and b with the defaults applied, as float32 (Lucene's
// BM25Similarity keeps them as float).
func (c Config) params() (k1, b float32) {
	k1, b = DefaultK1, DefaultB
	if c.K1 != nil {
		k1 = float32(*c.K1)
	}
	if c.B != nil {
		b = float32(*c.B)
	}
	return k1, b
}
