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

// Config configures a Builder. The zero value is valid and means Pyserini's
// defaults. The parameters are written into the index file, so an Index
// scores with the parameters its builder had.
type Config struct {
	// K1 is BM25's term-frequency saturation, k1 >= 0; nil means
	// DefaultK1 (0.9). k1 = 0 scores every matching term by its idf alone.
	// With Go 1.26: Config{K1: new(1.2)}.
	K1 *float64
	// B is BM25's length normalisation, 0 <= b <= 1; nil means DefaultB
	// (0.4). b = 0 turns length normalisation off.
	B *float64
}

// ErrConfig is wrapped by the errors of Config.Validate.
var ErrConfig = errors.New("bm25: bad config")

// Validate reports a bad field: K1 must be finite and >= 0, B finite and in [0, 1].
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
