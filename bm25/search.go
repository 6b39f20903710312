package bm25

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rlsearch/rlsearch"
)

// exhausted is the position of a cursor past its last posting; rows are
// below math.MaxInt32.
const exhausted = math.MaxInt32

// scratch is the per-query working memory, reused through Index.pool.
type scratch struct {
	an      analyzer
	terms   []string
	cursors []cursor
	order   []int
	part    []int // the window's terms: non-essential, then essential
	pre     []float64
	contrib []float32
	heap    []rlsearch.Hit
	acc     []float32 // exhaustive oracle only: numDocs
	seen    []uint64  // exhaustive oracle only: numDocs bits
	touched []int32
	gorder  []int     // query terms by increasing global bound ub
	gpre    []float64 // prefix sums of ub in gorder
	win     []float64 // windowMax: essential score per row of the window
	winBits []uint64  // windowMax bits: rows of the window with a match
	ld      []int32   // rows of the essential postings of the window, per term
	ls      []float32 // their term scores
	probed  []int     // query terms with a contribution to the current candidate
	ne      []*cursor // the window's non-essential terms, by increasing window bound
}

func (ix *Index) getScratch() *scratch {
	if s, ok := ix.pool.Get().(*scratch); ok {
		return s
	}
	return &scratch{}
}

// cursor iterates the postings of one query term, block by block, decoding
// a block only when a posting in it is needed.
type cursor struct {
	ix       *Index
	t        int     // term id
	qi       int     // position among the query's distinct terms (sorted order)
	w        float32 // weight = boost · idf
	skips    []byte
	post     []byte // from the term's first block to the end of the section
	postBase int64  // file offset of post[0]
	nb, blk  int    // blocks, current block (nb when exhausted)
	blkOff   uint64 // offset of the current block in post
	prevLast int32  // last row of the previous block, -1 before the first
	last     int32  // last row of the current block
	blen     uint32
	left     int     // postings in the current and later blocks
	maxX     float32 // the current block's largest tfNorm (its skip entry)
	// blockBound is termScore(w, maxX) of block boundBlk, the bound of the
	// term's score on that block's rows (currentBlockBound computes it once
	// per block).
	blockBound float64
	boundBlk   int
	ub         float64 // bound of the term's score on every row
	df         int     // the term's postings
	decoded    bool
	n, i       int
	pos        int32 // current row when decoded; else a lower bound of the next row
	docs       [BlockSize]int32
	bp         blockParts // the decoded block's slots, tfs and escapes, in the file
	window     cursorWindow
}

// cursorWindow is a cursor's state in the current window of a MaxScore
// search (maxScore.partition sets it, maxScore.scoreEssential fills the
// postings of an essential term).
type cursorWindow struct {
	// bound bounds the term's score on every row of the window: the term
	// score of the largest block maximum among the blocks that intersect
	// it (cursor.windowBound).
	bound float64
	// perPosting is bound / df, the partition's order (Lucene's
	// MaxScoreBulkScorer weighs a term's bound by its cost).
	perPosting float64
	// essential: the term's postings in the window were scored into the
	// window buffer; they are maxScore.ld[lo:hi] (rows) and
	// maxScore.ls[lo:hi] (their term scores), and at walks them in row
	// order while candidates are completed.
	essential bool
	lo, hi    int
	at        int
}

// currentBlockBound is the bound of the term's score on the rows of the
// current block, termScore of its skip entry's largest tfNorm (termScore
// is monotone in tfNorm), computed once per block.
func (c *cursor) currentBlockBound() float64 {
	if c.boundBlk != c.blk {
		c.blockBound, c.boundBlk = float64(termScore(c.w, c.maxX)), c.blk
	}
	return c.blockBound
}

func (c *cursor) init(ix *Index, t, qi int, boost float32) error {
	e, skips, post, err := ix.postingsOf(t)
	if err != nil {
		return err
	}
	*c = cursor{ix: ix, t: t, qi: qi, skips: skips, post: post, postBase: ix.offPost + int64(e.postOff),
		nb: len(skips) / skipSize, prevLast: -1, left: int(e.df), boundBlk: -1}
	c.w, c.df = boost*idf(ix.scoreDF(t, e.df), ix.g.docCount), int(e.df)
	c.ub = float64(termScore(c.w, e.maxX))
	c.loadSkip()
	return nil
}

func (c *cursor) loadSkip() {
	c.decoded = false
	if c.blk >= c.nb {
		c.pos, c.maxX = exhausted, 0
		return
	}
	s := c.skips[skipSize*c.blk:]
	c.last = int32(le.Uint32(s))
	c.maxX = math.Float32frombits(le.Uint32(s[4:]))
	c.blen = le.Uint32(s[8:])
	c.pos = max(c.pos, c.prevLast+1)
}

func (c *cursor) nextBlock() {
	c.blkOff += uint64(c.blen)
	c.prevLast = c.last
	c.left -= min(c.left, BlockSize)
	c.blk++
	c.loadSkip()
}

// skipTo positions the cursor lazily at the first posting >= target: it
// moves over whole blocks by their skip entries without decoding them.
func (c *cursor) skipTo(target int32) {
	if c.pos >= target {
		return
	}
	if c.decoded && target <= c.last {
		for c.docs[c.i] < target {
			c.i++
		}
		c.pos = c.docs[c.i]
		return
	}
	for c.blk < c.nb && c.last < target {
		c.nextBlock()
	}
	if c.blk < c.nb {
		c.pos = max(target, c.pos)
	}
}

// windowBound returns a bound of the term's score on the rows from the
// cursor's position up to wEnd: the term score of the largest tfNorm among
// the blocks that intersect those rows, read from their skip entries
// without decoding (termScore is monotone in tfNorm). It is 0 when the
// term has no posting there.
func (c *cursor) windowBound(wEnd int32) float64 {
	if c.pos > wEnd {
		return 0
	}
	m, last := c.maxX, c.last
	for j := c.blk + 1; j < c.nb && last < wEnd; j++ {
		s := c.skips[skipSize*j:]
		m = max(m, math.Float32frombits(le.Uint32(s[4:])))
		last = int32(le.Uint32(s))
	}
	return float64(termScore(c.w, m))
}

// advance positions the cursor exactly at the first posting >= target.
func (c *cursor) advance(target int32) error {
	c.skipTo(target)
	if c.pos == exhausted || c.decoded {
		return nil
	}
	if err := c.decode(); err != nil {
		return err
	}
	for c.docs[c.i] < c.pos {
		c.i++
	}
	c.pos = c.docs[c.i]
	return nil
}

func (c *cursor) decode() error {
	if c.blkOff > uint64(len(c.post)) || uint64(c.blen) > uint64(len(c.post))-c.blkOff {
		return corrupt("skip entries at offset %d: term %d block %d of %d bytes at postings offset %d runs past the postings", c.ix.offSkip+int64(len(c.ix.skips)-len(c.skips)+skipSize*c.blk), c.t, c.blk, c.blen, c.postBase+int64(c.blkOff))
	}
	c.n = min(c.left, BlockSize)
	off := c.postBase + int64(c.blkOff)
	bp, err := decodePostings(c.post[c.blkOff:c.blkOff+uint64(c.blen)], c.n, c.prevLast, c.last, c.ix.numDocs, &c.docs, off)
	if err != nil {
		return fmt.Errorf("term %d block %d: %w", c.t, c.blk, err)
	}
	c.bp = bp
	c.decoded, c.i = true, 0
	return nil
}

// decodeFast is decodeBlock's common case: it decodes the n row gaps at
// the start of p when every gap is a varint of at most 2 bytes, into docs,
// and returns their byte length and whether they were valid that way. Then
// the result is exactly decodeBlock's (same varint decoding; rows strictly
// increase, so the last row equal to the skip entry's last < numDocs puts
// every row in range). Otherwise (longer varints, or any error) ok is
// false and the caller runs decodeBlock, which decodes or names the error.
func decodeFast(p []byte, n int, prev, last int32, numDocs int, docs *[BlockSize]int32) (end int, ok bool) {
	if n > BlockSize || int64(last) >= int64(numDocs) {
		return 0, false
	}
	row, pos := int64(prev), 0
	for i := range n {
		if pos >= len(p) {
			return 0, false
		}
		if b := p[pos]; b < 0x80 {
			row += 1 + int64(b)
			pos++
		} else if pos+1 < len(p) && p[pos+1] < 0x80 {
			row += 1 + int64(uint32(b&0x7f)|uint32(p[pos+1])<<7)
			pos += 2
		} else {
			return 0, false
		}
		docs[i] = int32(row)
	}
	return pos, row == int64(last)
}

// next moves past the current (decoded) posting.
func (c *cursor) next() error {
	c.i++
	if c.i < c.n {
		c.pos = c.docs[c.i]
		return nil
	}
	c.nextBlock()
	if c.blk >= c.nb {
		return nil
	}
	if err := c.decode(); err != nil {
		return err
	}
	c.pos = c.docs[0]
	return nil
}

// score is the term's contribution to the current row.
func (c *cursor) score() float32 {
	return termScore(c.w, tfNorm(c.bp.tf(c.i), c.ix.normInv[c.pos]))
}

// Search returns the k best rows for query by BM25 (Lucene 9
// BM25Similarity, see the package documentation), sorted by descending
// score, ties by ascending row (rlsearch.Less). It returns nil when the
// index is found corrupt while searching; SearchErr returns that error.
//
// The query is analyzed with Analyze and treated as a bag of words: a term
// that occurs c times counts c times (Pyserini's BagOfWordsQueryGenerator
// boosts its TermQuery by c). Only rows that contain at least one query
// term are returned, so the result is shorter than k when fewer rows match
// and empty (nil) for k <= 0 or a query without index terms (for example
// stop words only).
//
// Cost: block-max MaxScore over 128-posting blocks (see the package
// documentation): it decodes only the blocks that can hold a top-k row and
// returns exactly the rows and float32 scores of exhaustive scoring.
// Memory: a few KiB of pooled scratch per query term, independent of the
// number of rows. When k is large for the index (k · 2000 > rows, rows <=
// 2^22) it scores every posting into a pooled dense accumulator instead
// (4 bytes per row), which is faster there and gives the same hits. The returned slice is owned by the caller. Search
// is safe for concurrent use.
func (ix *Index) Search(query string, k int) []rlsearch.Hit {
	hits, _ := ix.SearchErr(query, k)
	return hits
}

// SearchErr is Search that also returns the error wrapping ErrCorrupt when
// a damaged part of the file (a term's checksum, a block that does not
// decode) is met while searching; the hits are then nil.
func (ix *Index) SearchErr(query string, k int) ([]rlsearch.Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	s := ix.getScratch()
	defer ix.pool.Put(s)
	return ix.search(s, query, k, ix.preferExhaustive(k))
}

// SearchBatch runs Search for every query on runtime.GOMAXPROCS(0) goroutines
// and returns one result list per query, in query order.
//
// It checks ctx between queries and returns ctx.Err() (and no results)
// once ctx is done. A negative k returns an error wrapping
// rlsearch.ErrBadInput; a corrupt index an error wrapping ErrCorrupt that
// names the query index (and no results). SearchBatch is safe for
// concurrent use.
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
	var failed atomic.Bool
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ix.getScratch()
			defer ix.pool.Put(s)
			for ctx.Err() == nil && !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(queries) {
					return
				}
				out[i], errs[i] = ix.search(s, queries[i], k, ix.preferExhaustive(k))
				if errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("bm25: query %d: %w", i, err)
		}
	}
	return out, nil
}

// prepare analyzes query into its distinct terms (sorted, so that float32
// sums are reproducible) and opens a cursor for each one in the index.
// QueryKey returns a key of query under which two queries get the same
// hits from every Index at every k: the analysed terms (Analyze), sorted,
// joined by NUL, which is all that scoring reads of a query (prepare sorts
// the terms and counts repeats). "Who directed The Informant?" and
// "informant directed who" share a key; "" is the key of a query without
// terms. Result caches key BM25 results with it. Safe for concurrent use.
func QueryKey(query string) string {
	t := Analyze(query)
	slices.Sort(t)
	return strings.Join(t, "\x00")
}

func (ix *Index) prepare(s *scratch, query string) error {
	s.terms = s.terms[:0]
	s.an.run(query, func(term []byte) { s.terms = append(s.terms, string(term)) })
	slices.Sort(s.terms)
	s.cursors = s.cursors[:0]
	for i := 0; i < len(s.terms); {
		j := i + 1
		for j < len(s.terms) && s.terms[j] == s.terms[i] {
			j++
		}
		t, err := ix.lookup(s.terms[i])
		if err != nil {
			return err
		}
		if t >= 0 {
			s.cursors = append(s.cursors, cursor{})
			c := &s.cursors[len(s.cursors)-1]
			if err := c.init(ix, t, len(s.cursors)-1, float32(j-i)); err != nil {
				return err
			}
		}
		i = j
	}
	return nil
}

func (ix *Index) search(s *scratch, query string, k int, exhaustive bool) ([]rlsearch.Hit, error) {
	if err := ix.prepare(s, query); err != nil {
		return nil, err
	}
	if len(s.cursors) == 0 {
		return nil, nil
	}
	if exhaustive {
		return ix.searchExhaustive(s, k)
	}
	return ix.searchMaxScore(s, k, 0, int32(ix.numDocs))
}

// preferExhaustive reports whether plain term-at-a-time scoring is the
// faster path for k on this index: when k is large relative to the rows,
// pruning skips little (measured on 1M generated rows at k = 1000: 162
// against 183 queries/s; at 5M rows pruning wins 46 to 24), and the dense
// accumulator it needs (4 bytes per row) is then at most 16 MiB. Both paths
// return identical hits.
func (ix *Index) preferExhaustive(k int) bool {
	return ix.numDocs <= 1<<22 && int64(k)*2000 > int64(ix.numDocs)
}

// SearchOptions tune SearchWith. The zero value searches like SearchErr.
type SearchOptions struct {
	// Parallel splits the rows into this many equal ranges, searched on
	// their own goroutines, whose top k are merged (intra-query
	// parallelism: lower latency on a large index at the cost of more total
	// work). 0 or 1 means one goroutine. The hits do not depend on it.
	Parallel int
}

// SearchWith is SearchErr with options. It is safe for concurrent use.
func (ix *Index) SearchWith(query string, k int, opts SearchOptions) ([]rlsearch.Hit, error) {
	if opts.Parallel < 0 {
		return nil, fmt.Errorf("bm25: SearchOptions.Parallel = %d, want >= 0: %w", opts.Parallel, rlsearch.ErrBadInput)
	}
	parts := min(opts.Parallel, ix.numDocs)
	if parts <= 1 || k <= 0 {
		return ix.SearchErr(query, k)
	}
	res := make([][]rlsearch.Hit, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := int32(int64(ix.numDocs)*int64(i)/int64(parts)), int32(int64(ix.numDocs)*int64(i+1)/int64(parts))
			s := ix.getScratch()
			defer ix.pool.Put(s)
			if errs[i] = ix.prepare(s, query); errs[i] == nil && len(s.cursors) > 0 {
				res[i], errs[i] = ix.searchMaxScore(s, k, lo, hi)
			}
		}()
	}
	wg.Wait()
	var all []rlsearch.Hit
	for i := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		all = append(all, res[i]...)
	}
	slices.SortFunc(all, cmpHit)
	if len(all) == 0 {
		return nil, nil
	}
	return all[:min(k, len(all))], nil
}

// windowMax is the number of rows of one search window, so that the window
// buffers (a float64 and a bit per row) stay in L1/L2. It is Lucene 9
// MaxScoreBulkScorer's INNER_WINDOW_SIZE.
const windowMax = 4096

// searchMaxScore is block-max MaxScore (Turtle & Flood 1995; Ding & Suel
// 2011 block-max bounds), in the windowed form of Lucene 9's
// MaxScoreBulkScorer. Let θ be the current k-th best score (-∞ until the
// heap holds k hits). A row enters the top k only with a score > θ,
// because every row already kept has a smaller row number (ties go to the
// lower row); θ only grows.
//
// Rows are processed in increasing order, in windows of windowMax rows:
//
//  1. Global skip. The terms sorted by their global bound ub split into
//     globally non-essential terms (a prefix whose bounds sum to at most
//     θ) and the rest. A row holding only globally non-essential terms
//     scores at most θ, so the next window starts at the smallest position
//     of a globally essential term; rows before it are skipped unread.
//  2. Window partition. Each term's window bound mw is the largest block
//     bound among its blocks that intersect the window (skip entries only;
//     a frequent term spans several blocks of one window). The terms split
//     again into window non-essential terms, whose bounds sum to at most θ,
//     and essential ones: taken by increasing mw / df (Lucene's
//     MaxScoreBulkScorer.partitionScorers), each term is non-essential if
//     it still fits under θ, which leaves the costly frequent terms out of
//     the essential set first.
//  3. The postings of the essential terms in the window are scored term at
//     a time into a window buffer (and kept per term, in scratch.ld/ls).
//     Only rows they match are candidates. A block of an essential term
//     that lies inside the window and whose block bound plus the other
//     terms' window bounds is at most θ is skipped unread: none of its rows
//     can enter the top k, and such a row met through another term is
//     scored without this term, a float32 sum that stays <= θ (the same
//     margin argument as below), so it is not kept either.
//     The non-essential terms are then
//     probed by decreasing bound; a candidate is dropped as soon as its
//     score so far plus the bounds of the terms not yet probed (before
//     decoding a block, its block bound for the term being probed) cannot
//     exceed θ, else it gets its exact score.
//
// Windows depend only on the globally essential terms, so a frequent term
// of small idf costs no window of its own once θ exceeds its bound (with
// windows bounded by every term's block, such a term, whose 128-posting
// blocks span a few hundred rows, cut the rows into tiny windows).
//
// Exactness: every kept row's score is the float32 sum, in sorted term
// order, of the same float32 term scores as searchExhaustive (absent terms
// add +0, which leaves a float32 sum unchanged), so scores are
// bit-identical. Bounds: termScore is monotone in tfNorm, so a block's
// stored maximal tfNorm gives a float32 bound >= each term score in it; ub
// covers every row and mw every row of the window. Bounds and partial
// scores are summed in float64 and multiplied by f = 1 + (n+2)·2⁻²², which
// exceeds the worst relative difference between a float32 left-to-right
// sum of n terms and the exact sum, so a skipped or pruned row's float32
// score is provably <= θ.
//
// Norms come with the postings: each posting's norm slot indexes
// Index.normVals, whose entry is bit for bit the normInv of the row (a row
// whose length has no slot, normEscape, has its length in the block and
// Index.norms gives its norm), so scoring an essential term's postings
// reads them sequentially instead of one random per-row norm each (at 5M
// rows, ~200k essential postings per question: +15% queries/s, measured
// interleaved against per-row norm reads).
//
// Only rows in [lo, hi) are searched (SearchWith's row ranges).
//
// The state of one search is a maxScore; its methods are the steps:
// nextWindow (1), partition (2), scoreEssential and probeCandidates (3).
func (ix *Index) searchMaxScore(s *scratch, k int, lo, hi int32) ([]rlsearch.Hit, error) {
	var m maxScore
	m.init(ix, s, k)
	for i := range m.cs {
		m.cs[i].skipTo(lo)
	}
	for {
		wStart, ok := m.nextWindow(hi)
		if !ok {
			break
		}
		wEnd := int32(min(int64(hi)-1, int64(wStart)+windowMax-1))
		m.partition(wStart, wEnd)
		if m.p < len(m.cs) {
			err := m.scoreEssential()
			if err == nil {
				err = m.probeCandidates()
			}
			if err != nil {
				m.abandon()
				return nil, err
			}
		}
		if wEnd == hi-1 {
			break
		}
		for i := range m.cs {
			m.cs[i].skipTo(wEnd + 1)
		}
	}
	return m.finish(), nil
}

// maxScore is the state of one searchMaxScore: the query's cursors, the
// running top k and its threshold θ, and the current window. It lives on
// the stack of searchMaxScore; its slices are the scratch's, given back
// by finish (or cleaned by abandon after an error).
type maxScore struct {
	ix *Index
	s  *scratch
	cs []cursor
	k  int
	// f is the rounding margin every bound and partial score is
	// multiplied by before it is compared with θ: 1 + (n+2)·2⁻²² exceeds
	// the worst relative difference between a float32 left-to-right sum
	// of n terms and the exact sum.
	f float64
	// theta is θ, the k-th best score once the heap holds k hits, else
	// -Inf; h is the heap (rlsearch.Hit order, worst at the root).
	theta float64
	h     []rlsearch.Hit
	// order holds the terms by increasing window bound per posting (the
	// partition's order, kept from window to window); gorder by
	// increasing global bound ub, gpre the prefix sums of ub in that
	// order, and gorder[:gp] are the globally non-essential terms.
	order, gorder []int
	gpre          []float64
	gp            int
	// The window [wStart, wEnd]: part[:p] are its non-essential terms by
	// increasing window bound (pre: their prefix sums, nonEss: their
	// total; ne: their cursors), part[p:] the essential ones.
	wStart, wEnd int32
	part         []int
	p            int
	pre          []float64
	nonEss       float64
	ne           []*cursor
	// ld and ls are the essential postings of the window (rows and term
	// scores, per term at cursorWindow.lo:hi); win and winBits the window
	// buffer (essential score and a match bit per row); contrib and probed
	// the non-essential contributions to the current candidate.
	ld      []int32
	ls      []float32
	win     []float64
	winBits []uint64
	contrib []float32
	probed  []int
}

// init prepares a search of s.cursors for the top k: the global order of
// the terms and the scratch buffers, sized for the query.
func (m *maxScore) init(ix *Index, s *scratch, k int) {
	cs := s.cursors
	n := len(cs)
	s.order = slices.Grow(s.order[:0], n)[:n]
	s.part = slices.Grow(s.part[:0], n)[:n]
	s.gorder = slices.Grow(s.gorder[:0], n)[:n]
	s.pre = slices.Grow(s.pre[:0], n)[:n]
	s.gpre = slices.Grow(s.gpre[:0], n)[:n]
	s.contrib = slices.Grow(s.contrib[:0], n)[:n]
	clear(s.contrib)
	if s.win == nil {
		s.win = make([]float64, windowMax)
		s.winBits = make([]uint64, windowMax/64)
	}
	*m = maxScore{ix: ix, s: s, cs: cs, k: k, f: 1 + float64(n+2)*0x1p-22, theta: math.Inf(-1), h: s.heap[:0],
		order: s.order, gorder: s.gorder, gpre: s.gpre, part: s.part, pre: s.pre,
		ne: s.ne[:0], ld: s.ld[:0], ls: s.ls[:0], win: s.win, winBits: s.winBits, contrib: s.contrib, probed: s.probed[:0]}
	for i := range m.order {
		m.order[i], m.gorder[i] = i, i
	}
	slices.SortFunc(m.gorder, func(a, b int) int { return cmpFloat(cs[a].ub, cs[b].ub) })
	sum := 0.0
	for i, o := range m.gorder {
		sum += cs[o].ub
		m.gpre[i] = sum
	}
}

// abandon clears the window buffer and the contributions after an error
// in the middle of a window (a damaged block), so that the pooled scratch
// starts the next search clean.
func (m *maxScore) abandon() {
	clear(m.win)
	clear(m.winBits)
	clear(m.contrib)
	clear(m.ne[:cap(m.ne)])
	m.s.ne = m.ne[:0]
}

// nextWindow is step 1, the global skip: with the terms whose global
// bounds sum to at most θ set aside, the next window starts at the
// smallest position of the others. ok is false when that is at or past
// hi (the search is done).
func (m *maxScore) nextWindow(hi int32) (wStart int32, ok bool) {
	n := len(m.cs)
	for m.gp < n && m.gpre[m.gp]*m.f <= m.theta {
		m.gp++
	}
	wStart = exhausted
	for _, o := range m.gorder[m.gp:] {
		wStart = min(wStart, m.cs[o].pos)
	}
	return wStart, wStart < hi
}

// partition is step 2: every cursor moves to wStart and gets its window
// bound; then the terms split into the window's non-essential ones, whose
// bounds sum to at most θ, and the essential rest (see searchMaxScore).
func (m *maxScore) partition(wStart, wEnd int32) {
	cs, order, part, pre := m.cs, m.order, m.part, m.pre
	n := len(cs)
	m.wStart, m.wEnd = wStart, wEnd
	for i := range cs {
		c := &cs[i]
		c.skipTo(wStart)
		c.window.bound = c.windowBound(wEnd)
		c.window.perPosting = c.window.bound / float64(c.df)
		c.window.essential = false
	}
	// Lucene's MaxScoreBulkScorer.partitionScorers: by increasing window
	// bound per posting (insertion sort from the previous window's order,
	// nearly sorted already), a term is non-essential while the bounds of
	// the non-essential terms still sum to at most θ; this favours
	// frequent terms, whose postings cost the most. The non-essential
	// terms, part[:p], are then sorted by bound (probed from the largest),
	// the essential ones follow.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && cs[order[j]].window.perPosting < cs[order[j-1]].window.perPosting; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	p, e, sum := 0, n, 0.0
	for _, o := range order {
		if (sum+cs[o].window.bound)*m.f <= m.theta {
			sum += cs[o].window.bound
			part[p] = o
			p++
		} else {
			e--
			part[e] = o
		}
	}
	for i := 1; i < p; i++ {
		for j := i; j > 0 && cs[part[j]].window.bound < cs[part[j-1]].window.bound; j-- {
			part[j], part[j-1] = part[j-1], part[j]
		}
	}
	sum = 0
	for i, o := range part[:p] {
		sum += cs[o].window.bound
		pre[i] = sum
	}
	m.p, m.nonEss = p, 0
	if p > 0 {
		m.nonEss = pre[p-1]
	}
	m.ne = m.ne[:0]
	for _, o := range part[:p] {
		m.ne = append(m.ne, &cs[o])
	}
}

// scoreEssential is the first half of step 3: the postings of every
// essential term in the window are scored, term at a time, into the window
// buffer and kept per term (ld, ls); a block of such a term that lies in
// the window and cannot lift any row above θ, even with every other term's
// window bound, is skipped unread.
func (m *maxScore) scoreEssential() error {
	cs, order, win, winBits := m.cs, m.order, m.win, m.winBits
	normVals, norms := &m.ix.normVals, m.ix.norms
	wStart, wEnd, f, theta := m.wStart, m.wEnd, m.f, m.theta
	ld, ls := m.ld[:0], m.ls[:0]
	for _, o := range m.part[m.p:] {
		c := &cs[o]
		c.window.essential = true
		c.window.lo = len(ld)
		// others bounds the other terms' score on any row of the window: a
		// block of this term inside the window whose bound plus others
		// cannot exceed θ holds no competitive row, so it is skipped unread
		// (a row of it found through another term is then scored without
		// this term, which keeps its float32 sum <= θ: it is not kept).
		others := 0.0
		for _, o2 := range order {
			if o2 != o {
				others += cs[o2].window.bound
			}
		}
		for c.pos <= wEnd {
			if c.last <= wEnd && (others+c.currentBlockBound())*f <= theta {
				c.nextBlock()
				continue
			}
			if !c.decoded {
				if err := c.advance(c.pos); err != nil {
					return err
				}
				if c.pos > wEnd {
					break
				}
			}
			// The decoded postings c.i..j-1 lie in the window: score them
			// in one tight loop.
			j := c.n
			if c.last > wEnd {
				j = c.i + 1
				for j < c.n && c.docs[j] <= wEnd {
					j++
				}
			}
			docs, tfs, sl := c.docs[c.i:j], c.bp.tfs[c.i:j], c.bp.slots[c.i:j]
			tfs, sl = tfs[:len(docs)], sl[:len(docs)]
			er := -1 // escaped lengths before the next escaped posting, once needed
			l := len(ld)
			ld, ls = slices.Grow(ld, len(docs))[:l+len(docs)], slices.Grow(ls, len(docs))[:l+len(docs)]
			lds, lss := ld[l:], ls[l:len(ld)]
			lds, lss = lds[:len(docs)], lss[:len(docs)]
			w := c.w
			for t, d := range docs {
				ni := sl[t]
				nv := normVals[ni]
				if ni == normEscape {
					if er < 0 {
						er = bytes.Count(c.bp.slots[:c.i+t], escSep)
					}
					nv = norms.get(le.Uint32(c.bp.escLens[4*er:]))
					er++
				}
				tf := uint32(tfs[t])
				if tf == tfEscape {
					tf = c.bp.tf(c.i + t)
				}
				x := termScore(w, tfNorm(tf, nv))
				r := d - wStart
				win[r] += float64(x)
				winBits[r>>6] |= 1 << (r & 63)
				lds[t], lss[t] = d, x
			}
			c.i = j
			if j < c.n {
				c.pos = c.docs[j]
				break
			}
			c.nextBlock() // lazy: decoded above if it starts in the window
		}
		c.window.hi, c.window.at = len(ld), c.window.lo
	}
	m.ld, m.ls = ld, ls
	return nil
}

// probeCandidates is the second half of step 3: every row the essential
// terms matched, in increasing order, is completed by probing the
// non-essential terms by decreasing bound, dropped as soon as its score so
// far plus the bounds of the terms not yet probed cannot exceed θ, and
// otherwise scored exactly and offered to the heap. It clears the window
// buffer as it goes.
func (m *maxScore) probeCandidates() error {
	win, winBits := m.win, m.winBits
	wStart, nonEss, f := m.wStart, m.nonEss, m.f
	for wi, word := range winBits[:(m.wEnd-wStart)/64+1] {
		for word != 0 {
			r := int32(wi*64 + bits.TrailingZeros64(word))
			word &= word - 1
			d := wStart + r
			partial := win[r]
			win[r] = 0
			if (partial+nonEss)*f <= m.theta {
				continue
			}
			partial, pruned, err := m.probe(d, partial)
			if err != nil {
				return err
			}
			// partial is now the exact (float64) sum of the row's
			// contributions; the float32 sum cannot exceed it by more than
			// the margin.
			if !pruned && partial*f > m.theta {
				m.offer(d)
			}
			for _, qi := range m.probed {
				m.contrib[qi] = 0
			}
			m.probed = m.probed[:0]
		}
		winBits[wi] = 0
	}
	return nil
}

// probe adds to partial, the essential score of candidate row d, the
// contributions of the non-essential terms (into contrib, their query
// positions into probed), by decreasing bound; pruned reports that d was
// dropped on the way because partial plus the bounds of the terms not yet
// probed (before decoding a block, its block bound for the term being
// probed) cannot exceed θ. (partial+nonEss)·f > θ holds on entry.
func (m *maxScore) probe(d int32, partial float64) (float64, bool, error) {
	ne, pre, f, theta := m.ne, m.pre, m.f, m.theta
	normVals, norms := &m.ix.normVals, m.ix.norms
	for j := m.p - 1; j >= 0; j-- {
		c := ne[j]
		if c.pos < d {
			if c.decoded && d <= c.last {
				// skipTo's first case, inlined: docs[c.i] < d <= docs[c.n-1].
				i := c.i + 1
				for c.docs[i] < d {
					i++
				}
				c.i, c.pos = i, c.docs[i]
			} else {
				c.skipTo(d)
			}
		}
		rest := 0.0
		if j > 0 {
			rest = pre[j-1]
		}
		if c.pos <= d {
			if !c.decoded {
				// Before decoding, try the bound of the one block that may
				// hold d (<= c.window.bound).
				if (partial+rest+c.currentBlockBound())*f <= theta {
					return partial, true, nil
				}
				if err := c.advance(d); err != nil {
					return partial, false, err
				}
			}
			if c.pos == d {
				ni := c.bp.slots[c.i]
				nv := normVals[ni]
				if ni == normEscape {
					nv = norms.get(c.bp.escapedLen(c.i))
				}
				x := termScore(c.w, tfNorm(c.bp.tf(c.i), nv))
				m.contrib[c.qi] = x
				m.probed = append(m.probed, c.qi)
				partial += float64(x)
			}
		}
		if j > 0 && (partial+rest)*f <= theta {
			return partial, true, nil
		}
	}
	return partial, false, nil
}

// offer computes the exact float32 score of candidate d, the sum in
// query-term order of the essential terms' kept scores and the probed
// contributions (bit-identical to searchExhaustive), and pushes it into
// the heap when it beats θ, raising θ once the heap is full.
func (m *maxScore) offer(d int32) {
	cs, ld, ls := m.cs, m.ld, m.ls
	var sc float32
	for qi := range cs {
		c := &cs[qi]
		x := m.contrib[qi]
		if c.window.essential {
			for c.window.at < c.window.hi && ld[c.window.at] < d {
				c.window.at++
			}
			if c.window.at < c.window.hi && ld[c.window.at] == d {
				x = ls[c.window.at]
			}
		}
		sc = float32(sc + x)
	}
	if len(m.h) < m.k || float64(sc) > m.theta {
		m.h = pushHit(m.h, rlsearch.Hit{Row: d, Score: sc}, m.k)
		if len(m.h) == m.k {
			m.theta = float64(m.h[0].Score)
		}
	}
}

// finish gives the buffers back to the scratch and returns the hits,
// sorted.
func (m *maxScore) finish() []rlsearch.Hit {
	s := m.s
	clear(m.ne[:cap(m.ne)])
	s.heap, s.probed, s.ld, s.ls, s.ne = m.h, m.probed, m.ld, m.ls, m.ne[:0]
	hits := slices.Clone(m.h)
	slices.SortFunc(hits, cmpHit)
	return hits
}

func cmpFloat(a, b float64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// pushHit adds hit to the bounded heap h of at most k hits whose root is
// the worst hit kept (it ranks after every other by rlsearch.Less).
func pushHit(h []rlsearch.Hit, hit rlsearch.Hit, k int) []rlsearch.Hit {
	if len(h) < k {
		h = append(h, hit)
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !rlsearch.Less(h[p], h[i]) {
				break
			}
			h[p], h[i] = h[i], h[p]
			i = p
		}
		return h
	}
	if !rlsearch.Less(hit, h[0]) {
		return h
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
	return h
}

// searchExhaustive is the oracle: term-at-a-time over every posting of
// every query term, in sorted term order, into a dense float32 accumulator
// (4.125 bytes per row of scratch), then a bounded heap over the matched
// rows. It is the scoring of format version 1 and the reference the pruned
// search is tested against.
func (ix *Index) searchExhaustive(s *scratch, k int) ([]rlsearch.Hit, error) {
	if len(s.acc) != ix.numDocs {
		s.acc = make([]float32, ix.numDocs)
		s.seen = make([]uint64, (ix.numDocs+63)/64)
	}
	s.touched = s.touched[:0]
	defer func() {
		for _, d := range s.touched {
			s.acc[d] = 0
			s.seen[d>>6] = 0
		}
	}()
	for ci := range s.cursors {
		c := &s.cursors[ci]
		if err := c.advance(0); err != nil {
			return nil, err
		}
		for c.pos != exhausted {
			d := c.pos
			if s.seen[d>>6]&(1<<(d&63)) == 0 {
				s.seen[d>>6] |= 1 << (d & 63)
				s.touched = append(s.touched, d)
			}
			s.acc[d] += c.score()
			if err := c.next(); err != nil {
				return nil, err
			}
		}
	}
	h := s.heap[:0]
	for _, d := range s.touched {
		h = pushHit(h, rlsearch.Hit{Row: d, Score: s.acc[d]}, k)
	}
	s.heap = h
	hits := slices.Clone(h)
	slices.SortFunc(hits, cmpHit)
	if len(hits) == 0 {
		return nil, nil
	}
	return hits, nil
}

// searchOracle runs the exhaustive oracle for one query (tests and benchmarks).
func (ix *Index) searchOracle(query string, k int) ([]rlsearch.Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	s := ix.getScratch()
	defer ix.pool.Put(s)
	return ix.search(s, query, k, true)
}

// searchPruned runs the pruned path for one query whatever preferExhaustive
// says (tests and benchmarks).
func (ix *Index) searchPruned(query string, k int) ([]rlsearch.Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	s := ix.getScratch()
	defer ix.pool.Put(s)
	return ix.search(s, query, k, false)
}

// cmpHit is rlsearch.CompareHits (higher score first, ties by lower row).
func cmpHit(a, b rlsearch.Hit) int { return rlsearch.CompareHits(a, b) }
