package bm25

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkBuild measures indexing the wiki_multihop corpus (Add of every
// passage on Config.Workers = GOMAXPROCS analysis goroutines, plus
// WriteFile), in passages/s.
func BenchmarkBuild(b *testing.B) {
	w := loadWiki(b)
	var size int
	for _, c := range w.contents {
		size += len(c)
	}
	b.SetBytes(int64(size))
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		bd, _ := NewBuilder(Config{TempDir: dir})
		for _, c := range w.contents {
			bd.Add(c)
		}
		if err := bd.WriteFile(filepath.Join(dir, "wiki.bm25")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(w.contents))/b.Elapsed().Seconds(), "passages/s")
}

// wikiIndex builds and opens the wiki_multihop index once per benchmark.
func wikiIndex(b *testing.B) (*Index, []string, string) {
	w := loadWiki(b)
	bd, _ := NewBuilder(Config{TempDir: b.TempDir()})
	for _, c := range w.contents {
		bd.Add(c)
	}
	path := filepath.Join(b.TempDir(), "wiki.bm25")
	if err := bd.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	queries := make([]string, len(w.questions))
	for i, q := range w.questions {
		queries[i] = q.Question
	}
	return ix, queries, path
}

// BenchmarkOpen measures opening the wiki_multihop index file (mmap,
// header and length checks, norm table).
func BenchmarkOpen(b *testing.B) {
	_, _, path := wikiIndex(b)
	for b.Loop() {
		ix, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

// BenchmarkSearch measures top-k search of the wiki_multihop questions with
// the pruned (block-max MaxScore) and the exhaustive oracle path, serially,
// and pruned with SearchBatch over all cores, in queries/s.
func BenchmarkSearch(b *testing.B) {
	ix, queries, _ := wikiIndex(b)
	benchSearch(b, ix, queries)
}

func benchSearch(b *testing.B, ix *Index, queries []string) {
	for _, k := range []int{10, 1000} {
		name := fmt.Sprintf("n=%d/k=%d", ix.NumDocs(), k)
		for _, mode := range []string{"pruned", "exhaustive"} {
			b.Run(name+"/"+mode, func(b *testing.B) {
				i := 0
				for b.Loop() {
					q := queries[i%len(queries)]
					var err error
					if mode == "pruned" {
						_, err = ix.SearchErr(q, k)
					} else {
						_, err = ix.searchOracle(q, k)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			})
		}
		b.Run(name+"/pruned-batch", func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.SearchBatch(context.Background(), queries, k); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(queries))/b.Elapsed().Seconds(), "queries/s")
		})
	}
}
