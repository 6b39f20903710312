package bm25

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/procstat"
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
				cpu0 := procstat.CPU(0)
				for b.Loop() {
					q := queries[i%len(queries)]
					var err error
					if mode == "pruned" {
						_, err = ix.searchPruned(q, k)
					} else {
						_, err = ix.searchOracle(q, k)
					}
					if err != nil {
						b.Fatal(err)
					}
					i++
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
				// Process CPU time per query (procstat: /proc, 10 ms
				// ticks; 0 off Linux): on a shared machine it moves less
				// than wall time when other jobs take the cores (run with
				// GOMAXPROCS=1; it includes the GC's share).
				b.ReportMetric(float64((procstat.CPU(0)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
		// SearchBatch of 64 queries per op, over all cores (the path
		// SearchErr chooses: pruned, or exhaustive for a large k).
		b.Run(name+"/batch64", func(b *testing.B) {
			i := 0
			for b.Loop() {
				lo := (i * 64) % max(1, len(queries)-64)
				if _, err := ix.SearchBatch(context.Background(), queries[lo:min(lo+64, len(queries))], k); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.N*min(64, len(queries)))/b.Elapsed().Seconds(), "queries/s")
		})
	}
}

// BenchmarkSearchGenerated measures search on a generated corpus
// (genTopicalCorpus over the wiki_multihop passages) of $BM25_BENCH_DOCS
// passages, skipped when unset. With $BM25_BENCH_INDEX set, the index is
// kept at that path and reused by later runs (delete it afterwards).
func BenchmarkSearchGenerated(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("BM25_BENCH_DOCS"))
	if n <= 0 {
		b.Skip("set BM25_BENCH_DOCS to the number of passages")
	}
	w := loadWiki(b)
	path := os.Getenv("BM25_BENCH_INDEX")
	if path == "" {
		path = filepath.Join(b.TempDir(), "gen.bm25")
	}
	if _, err := os.Stat(path); err != nil {
		g := newTopicalGen(42, w.contents)
		bd, _ := NewBuilder(Config{TempDir: filepath.Dir(path)})
		start := time.Now()
		for range n {
			bd.Add(g.next())
		}
		if err := bd.WriteFile(path); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d passages in %v (%.0f passages/s)", n, time.Since(start), float64(n)/time.Since(start).Seconds())
	}
	start := time.Now()
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("Open %v", time.Since(start))
	defer ix.Close()
	if ix.NumDocs() != n {
		b.Fatalf("index at %s has %d rows, want %d", path, ix.NumDocs(), n)
	}
	queries := make([]string, len(w.questions))
	for i, q := range w.questions {
		queries[i] = q.Question
	}
	benchSearch(b, ix, queries)
}

// BenchmarkBuildGenerated builds $BM25_BENCH_DOCS generated passages
// (streamed, not held in memory) with $BM25_BENCH_BUDGET bytes of
// MemoryBudget (default: DefaultMemoryBudget), in passages/s; run it under
// /usr/bin/time -v to see the peak RSS. Skipped when BM25_BENCH_DOCS is unset.
func BenchmarkBuildGenerated(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("BM25_BENCH_DOCS"))
	if n <= 0 {
		b.Skip("set BM25_BENCH_DOCS to the number of passages")
	}
	budget, _ := strconv.ParseInt(os.Getenv("BM25_BENCH_BUDGET"), 10, 64)
	w := loadWiki(b)
	dir := b.TempDir()
	for b.Loop() {
		g := newTopicalGen(42, w.contents)
		bd, _ := NewBuilder(Config{TempDir: dir, MemoryBudget: budget})
		for range n {
			if _, err := bd.Add(g.next()); err != nil {
				b.Fatal(err)
			}
		}
		if err := bd.WriteFile(filepath.Join(dir, "gen.bm25")); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "passages/s")
}

// BenchmarkAnalyze measures the analyzer (Analyze's inner loop, no slice of
// results) on the wiki_multihop passages: all of them, the ASCII-only ones
// (the fast path that skips Unicode normalization) and the rest, in MB/s of
// input text.
func BenchmarkAnalyze(b *testing.B) {
	w := loadWiki(b)
	var ascii, other []string
	for _, c := range w.contents {
		if isASCII(c) {
			ascii = append(ascii, c)
		} else {
			other = append(other, c)
		}
	}
	for _, set := range []struct {
		name  string
		texts []string
	}{{"all", w.contents}, {"ascii", ascii}, {"nonascii", other}} {
		b.Run("texts="+set.name, func(b *testing.B) {
			n := 0
			for _, t := range set.texts {
				n += len(t)
			}
			b.SetBytes(int64(n))
			var a analyzer
			terms := 0
			for b.Loop() {
				for _, t := range set.texts {
					a.run(t, func([]byte) { terms++ })
				}
			}
		})
	}
}
