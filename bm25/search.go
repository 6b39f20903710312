package bm25

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rlsearch/rlsearch"
)

// scratch is the per-query working memory: a dense float32 accumulator and
// a seen bitset over all documents, the list of touched documents (so that
// only those are reset), and the top-k heap. Reused through bufPool.
type scratch struct {
	acc     []float32 // numDocs
	seen    []uint64  // numDocs bits
	touched []int32
	heap    []rlsearch.Hit
	an      analyzer
	terms   []string
}

// bufPool hands out scratch buffers sized for one index (sync.Pool).
type bufPool struct {
	n int
	p sync.Pool
}

func (bp *bufPool) get() *scratch {
	if s, ok := bp.p.Get().(*scratch); ok {
		return s
	}
	return &scratch{acc: make([]float32, bp.n), seen: make([]uint64, (bp.n+63)/64)}
}

func (bp *bufPool) put(s *scratch) { bp.p.Put(s) }

// Search returns the k best rows for query by BM25 (Lucene 9
// BM25Similarity, see the package documentation), sorted by descending
// score, ties by ascending row (rlsearch.Less).
//
// The query is analyzed with Analyze and treated as a bag of words: a term
// that occurs c times counts c times (Pyserini's BagOfWordsQueryGenerator
// boosts its TermQuery by c). Only rows that contain at least one query
// term are returned, so the result is shorter than k when fewer rows match
// and empty (nil) for k <= 0 or a query without index terms (for example
// stop words only).
//
// Cost: one pass over the postings of the query terms, then a bounded heap
// of k over the matched rows. Memory: 4.125 bytes per indexed row of pooled
// scratch per concurrent query. The returned slice is owned by the caller.
// Search is safe for concurrent use.
func (ix *Index) Search(query string, k int) []rlsearch.Hit {
	if k <= 0 {
		return nil
	}
	s := ix.pool.get()
	defer ix.pool.put(s)
	return ix.search(s, query, k)
}

// SearchBatch runs Search for every query on runtime.GOMAXPROCS(0) goroutines
// and returns one result list per query, in query order.
//
// It checks ctx between queries and returns ctx.Err() (and no results)
// once ctx is done. A negative k returns an error wrapping
// rlsearch.ErrBadInput. SearchBatch is safe for concurrent use.
func (ix *Index) SearchBatch(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("bm25: k = %d, want k >= 0: %w", k, rlsearch.ErrBadInput)
	}
	out := make([][]rlsearch.Hit, len(queries))
	if len(queries) == 0 || k == 0 {
		return out, ctx.Err()
	}
	workers := min(runtime.GOMAXPROCS(0), len(queries))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ix.pool.get()
			defer ix.pool.put(s)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(queries) {
					return
				}
				out[i] = ix.search(s, queries[i], k)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (ix *Index) search(s *scratch, query string, k int) []rlsearch.Hit {
	// Bag of words, in sorted term order so that float32 sums are reproducible.
	s.terms = s.terms[:0]
	s.an.run(query, func(term []byte) { s.terms = append(s.terms, string(term)) })
	slices.Sort(s.terms)

	s.touched = s.touched[:0]
	for i := 0; i < len(s.terms); {
		j := i + 1
		for j < len(s.terms) && s.terms[j] == s.terms[i] {
			j++
		}
		if t := ix.lookup(s.terms[i]); t >= 0 {
			ix.accumulate(s, t, float32(j-i))
		}
		i = j
	}
	hits := s.topK(k)
	for _, d := range s.touched {
		s.acc[d] = 0
		s.seen[d>>6] = 0
	}
	return hits
}

// accumulate adds term t's contribution, with query boost (multiplicity)
// boost, to every document in its postings. The term score is Lucene 9
// BM25Scorer.score: weight - weight / (1 + tf * normInverse), with
// weight = boost * idf, which equals idf * tf / (tf + k1 * (1 - b + b*dl/avgdl)).
func (ix *Index) accumulate(s *scratch, t int, boost float32) {
	weight := boost * idf(le.Uint32(ix.dfs[4*t:]), ix.docCount)
	p := ix.postings[le.Uint64(ix.postOffs[8*t:]):le.Uint64(ix.postOffs[8*t+8:])]
	doc := -1
	for len(p) > 0 {
		gap, n := binary.Uvarint(p)
		if n <= 0 {
			return // Open validated the postings; never reached.
		}
		p = p[n:]
		tf, n := binary.Uvarint(p)
		if n <= 0 {
			return
		}
		p = p[n:]
		doc += 1 + int(gap)
		if doc >= len(s.acc) {
			return
		}
		if s.seen[doc>>6]&(1<<(doc&63)) == 0 {
			s.seen[doc>>6] |= 1 << (doc & 63)
			s.touched = append(s.touched, int32(doc))
		}
		s.acc[doc] += weight - weight/(1+float32(tf)*ix.normInv[doc])
	}
}

// topK selects the k best touched documents with a bounded heap whose root
// is the worst hit kept, then sorts them by rlsearch.Less.
func (s *scratch) topK(k int) []rlsearch.Hit {
	if len(s.touched) == 0 {
		return nil
	}
	if k >= len(s.touched) {
		hits := make([]rlsearch.Hit, len(s.touched))
		for i, d := range s.touched {
			hits[i] = rlsearch.Hit{Row: d, Score: s.acc[d]}
		}
		slices.SortFunc(hits, cmpHit)
		return hits
	}
	h := s.heap[:0]
	for _, d := range s.touched {
		hit := rlsearch.Hit{Row: d, Score: s.acc[d]}
		if len(h) < k {
			h = append(h, hit)
			// sift up: parent must be worse than (rank after) child.
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !rlsearch.Less(h[p], h[i]) {
					break
				}
				h[p], h[i] = h[i], h[p]
				i = p
			}
			continue
		}
		if !rlsearch.Less(hit, h[0]) {
			continue
		}
		h[0] = hit
		for i := 0; ; {
			l, w := 2*i+1, i
			if l < len(h) && rlsearch.Less(h[w], h[l]) {
				w = l
			}
			if r := l + 1; r < len(h) && rlsearch.Less(h[w], h[r]) {
				w = r
			}
			if w == i {
				break
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	s.heap = h
	hits := slices.Clone(h)
	slices.SortFunc(hits, cmpHit)
	return hits
}

func cmpHit(a, b rlsearch.Hit) int {
	if rlsearch.Less(a, b) {
		return -1
	}
	if rlsearch.Less(b, a) {
		return 1
	}
	return 0
}
