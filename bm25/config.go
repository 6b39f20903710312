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
//
// Every field follows the module's options convention (rlsearch.Off): 0
// means the documented default. k1 = 0 and b = 0 are meaningful BM25
// parameters, so a literal zero is asked for with rlsearch.Off (any
// negative value): Config{B: rlsearch.Off} scores with b = 0. (K1 and B
// were *float64, nil meaning the default, until issue 37 made every
// option of the module read the same way.)
type Config struct {
	// K1 is BM25's term-frequency saturation; 0 means DefaultK1 (0.9),
	// rlsearch.Off (negative) k1 = 0, which scores every matching term by
	// its idf alone (term frequency off).
	K1 float64
	// B is BM25's length normalisation, at most 1; 0 means DefaultB (0.4),
	// rlsearch.Off (negative) b = 0, which turns length normalisation off.
	B float64

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

// Validate reports a bad field: K1 and B must be finite (a negative value
// is rlsearch.Off, a literal 0), K1 at most math.MaxFloat32, B at most 1,
// MemoryBudget and Workers >= 0.
func (c Config) Validate() error {
	if k1 := c.K1; math.IsNaN(k1) || math.IsInf(k1, 0) || k1 > math.MaxFloat32 {
		return fmt.Errorf("%w: K1 = %v, want a finite value (0 = %v, negative = rlsearch.Off: k1 = 0)", ErrConfig, k1, DefaultK1)
	}
	if b := c.B; math.IsNaN(b) || math.IsInf(b, 0) || b > 1 {
		return fmt.Errorf("%w: B = %v, want B <= 1 (0 = %v, negative = rlsearch.Off: b = 0)", ErrConfig, b, DefaultB)
	}
	if c.MemoryBudget < 0 {
		return fmt.Errorf("%w: MemoryBudget = %d, want >= 0 bytes (0 = %d)", ErrConfig, c.MemoryBudget, DefaultMemoryBudget)
	}
	if c.Workers < 0 {
		return fmt.Errorf("%w: Workers = %d, want >= 0 (0 = GOMAXPROCS)", ErrConfig, c.Workers)
	}
	return nil
}

// params returns k1 and b with the defaults applied (0: the default,
// negative: 0), as float32 (Lucene's BM25Similarity keeps them as float).
func (c Config) params() (k1, b float32) {
	return param(c.K1, DefaultK1), param(c.B, DefaultB)
}

// param is v under the options convention: 0 means def, negative
// (rlsearch.Off) means 0.
func param(v, def float64) float32 {
	switch {
	case v == 0:
		return float32(def)
	case v < 0:
		return 0
	}
	return float32(v)
}
