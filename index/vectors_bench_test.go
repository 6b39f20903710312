package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/ann/vecfile"
)

// BenchmarkImportVectors streams the vector file named by
// RLSEARCH_IMPORT_FILE (e.g. a 1M × 768 faiss IndexFlatIP) into fp16 and
// int8 shards and reports vectors/s. Skipped without the variable.
func BenchmarkImportVectors(b *testing.B) {
	file := os.Getenv("RLSEARCH_IMPORT_FILE")
	if file == "" {
		b.Skip("RLSEARCH_IMPORT_FILE not set")
	}
	for _, dt := range []ann.DType{ann.FP16, ann.INT8} {
		b.Run(dt.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := vecfile.Open(file)
				if err != nil {
					b.Fatal(err)
				}
				n := r.Info().Count
				start := time.Now()
				cfg := BuildConfig{Vectors: file, VectorsEncoder: "bench", DType: dt}
				if _, err := importVectors(context.Background(), cfg, r, n, 0, []vectorDest{{lo: 0, hi: n, path: filepath.Join(b.TempDir(), DenseFile)}}, nil); err != nil {
					b.Fatal(err)
				}
				r.Close()
				b.ReportMetric(float64(n)/time.Since(start).Seconds(), "vectors/s")
			}
		})
	}
}
