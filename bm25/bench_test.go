package bm25

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkBuild measures indexing the wiki_multihop corpus (Add of every
// passage plus serialisation), in passages/s.
func BenchmarkBuild(b *testing.B) {
	w := loadWiki(b)
	var size int
	for _, c := range w.contents {
		size += len(c)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		bd, _ := NewBuilder(Config{})
		for _, c := range w.contents {
			bd.Add(c)
		}
		if err := bd.writeTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(w.contents))/b.Elapsed().Seconds(), "passages/s")
}

// BenchmarkOpen measures loading the wiki_multihop index file.
func BenchmarkOpen(b *testing.B) {
	w := loadWiki(b)
	bd, _ := NewBuilder(Config{})
	for _, c := range w.contents {
		bd.Add(c)
	}
	path := filepath.Join(b.TempDir(), "wiki.bm25")
	if err := bd.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Open(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch measures top-k search of the wiki_multihop questions,
// serially and with SearchBatch over all cores, in queries/s.
func BenchmarkSearch(b *testing.B) {
	w := loadWiki(b)
	bd, _ := NewBuilder(Config{})
	for _, c := range w.contents {
		bd.Add(c)
	}
	var buf bytes.Buffer
	bd.writeTo(&buf)
	ix, err := parse(buf.Bytes(), true)
	if err != nil {
		b.Fatal(err)
	}
	queries := make([]string, len(w.questions))
	for i, q := range w.questions {
		queries[i] = q.Question
	}
	name := fmt.Sprintf("n=%d/k=10", ix.NumDocs())
	b.Run(name+"/serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			ix.Search(queries[i%len(queries)], 10)
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
	})
	b.Run(name+"/batch", func(b *testing.B) {
		for b.Loop() {
			if _, err := ix.SearchBatch(context.Background(), queries, 10); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(queries))/b.Elapsed().Seconds(), "queries/s")
	})
}
