package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch/corpus"
)

// BenchmarkBuild builds a BM25 index (no vector file) over
// $RLSEARCH_BUILD_CORPUS, or the wiki_multihop corpus of the shared data
// (18,175 passages), and reports passages/s. Profile it with
// -cpuprofile to see where build time goes (corpus decode, docstore
// compression, BM25).
func BenchmarkBuild(b *testing.B) {
	path := os.Getenv("RLSEARCH_BUILD_CORPUS")
	if path == "" {
		path = filepath.Join(corpus.DataDir(), "wiki_multihop", "corpus.jsonl")
	}
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no corpus: %v", err)
	}
	n := 0
	for i := 0; i < b.N; i++ {
		dir := filepath.Join(b.TempDir(), "idx")
		meta, err := Build(context.Background(), BuildConfig{Corpus: path, Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		n += meta.NumDocs
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "passages/s")
}
