package bm25

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// runMagic starts every spilled run file. A run is a sequence of terms in
// strictly increasing byte order, each as uvarint(len(term)), term,
// uvarint(df), uvarint(xdf), then df (uvarint row gap, uvarint tf) pairs
// with gap = row - previous row - 1 (previous row = -1 before the first);
// an empty term (a single 0 byte) ends the run. df counts the term's
// postings, xdf the rows of shards not written (NewShardBuilder) that hold
// it, which count only towards its corpus-wide document frequency; df + xdf
// >= 1. Runs are private temporary files: they carry no checksum, but every
// value is range-checked on read.
const runMagic = "RLSBM25S"

// runSource yields terms in strictly increasing order, each with the
// postings of one contiguous row range (sources are merged in row order).
type runSource interface {
	// nextTerm moves to the next term; ok is false at the end. df is the
	// number of its postings here, xdf that of the rows of unwritten
	// shards that hold it (see runMagic).
	nextTerm() (term []byte, df, xdf uint64, ok bool, err error)
	// posting returns the next posting of the current term; it must be
	// called exactly df times before nextTerm.
	posting() (row int32, tf uint32, err error)
}

// postingSink receives the merged terms in order: df postings follow
// beginTerm (xdf is as in runSource.nextTerm, summed over the sources).
type postingSink interface {
	beginTerm(term []byte, df, xdf uint64) error
	add(row int32, tf uint32) error
	endTerm() error
}

// memSource reads the in-memory postings in term order.
type memSource struct {
	m     *memIndex
	order []int32
	i     int
	p     []byte
	row   int64
}

func (m *memIndex) source() *memSource {
	order := make([]int32, len(m.terms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(m.names[x], m.names[y]) })
	return &memSource{m: m, order: order, i: -1}
}

func (s *memSource) nextTerm() ([]byte, uint64, uint64, bool, error) {
	s.i++
	if s.i >= len(s.order) {
		return nil, 0, 0, false, nil
	}
	id := s.order[s.i]
	t := &s.m.terms[id]
	s.p, s.row = t.post, -1
	return []byte(s.m.names[id]), uint64(t.df), uint64(t.xdf), true, nil
}

func (s *memSource) posting() (int32, uint32, error) {
	gap, n := binary.Uvarint(s.p)
	tf, n2 := binary.Uvarint(s.p[max(n, 0):])
	if n <= 0 || n2 <= 0 {
		return 0, 0, errors.New("bm25: in-memory postings exhausted (internal error)")
	}
	s.p = s.p[n+n2:]
	s.row += 1 + int64(gap)
	return int32(s.row), uint32(tf), nil
}

// fileSource reads a spilled run.
type fileSource struct {
	r       *bufio.Reader
	name    string
	numDocs int64
	term    []byte
	left    uint64
	row     int64
}

func newFileSource(f *os.File, numDocs int) (*fileSource, error) {
	s := &fileSource{r: bufio.NewReaderSize(f, 256<<10), name: f.Name(), numDocs: int64(numDocs)}
	var m [len(runMagic)]byte
	if _, err := io.ReadFull(s.r, m[:]); err != nil || string(m[:]) != runMagic {
		return nil, fmt.Errorf("bm25: run %s: bad header (%v)", s.name, err)
	}
	return s, nil
}

func (s *fileSource) fail(what string, err error) error {
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("bm25: run %s: %s: %w", s.name, what, err)
}

func (s *fileSource) nextTerm() ([]byte, uint64, uint64, bool, error) {
	if s.left != 0 {
		return nil, 0, 0, false, fmt.Errorf("bm25: run %s: term %q has %d unread postings (internal error)", s.name, s.term, s.left)
	}
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, 0, 0, false, s.fail("term length", err)
	}
	if n == 0 {
		return nil, 0, 0, false, nil
	}
	if n > math.MaxUint16 {
		return nil, 0, 0, false, s.fail(fmt.Sprintf("term length %d", n), nil)
	}
	s.term = slices.Grow(s.term[:0], int(n))[:n]
	if _, err := io.ReadFull(s.r, s.term); err != nil {
		return nil, 0, 0, false, s.fail("term", err)
	}
	df, err := binary.ReadUvarint(s.r)
	if err != nil || df > uint64(s.numDocs) {
		return nil, 0, 0, false, s.fail(fmt.Sprintf("df %d", df), err)
	}
	xdf, err := binary.ReadUvarint(s.r)
	if err != nil || xdf > uint64(s.numDocs) || df+xdf == 0 {
		return nil, 0, 0, false, s.fail(fmt.Sprintf("df %d xdf %d", df, xdf), err)
	}
	s.left, s.row = df, -1
	return s.term, df, xdf, true, nil
}

func (s *fileSource) posting() (int32, uint32, error) {
	gap, err := binary.ReadUvarint(s.r)
	if err != nil {
		return 0, 0, s.fail("row gap", err)
	}
	tf, err := binary.ReadUvarint(s.r)
	if err != nil {
		return 0, 0, s.fail("tf", err)
	}
	if gap >= uint64(s.numDocs) || s.row+1+int64(gap) >= s.numDocs || tf == 0 || tf > math.MaxUint32 || s.left == 0 {
		return 0, 0, s.fail(fmt.Sprintf("posting gap %d tf %d", gap, tf), nil)
	}
	s.left--
	s.row += 1 + int64(gap)
	return int32(s.row), uint32(tf), nil
}

// srcHeap orders sources by current term, then by source index (row order).
type srcHeap struct {
	idx   []int
	terms [][]byte
	dfs   []uint64
	xdfs  []uint64
}

func (h *srcHeap) Len() int { return len(h.idx) }
func (h *srcHeap) Less(i, j int) bool {
	if c := bytes.Compare(h.terms[h.idx[i]], h.terms[h.idx[j]]); c != 0 {
		return c < 0
	}
	return h.idx[i] < h.idx[j]
}
func (h *srcHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *srcHeap) Push(x any)    { h.idx = append(h.idx, x.(int)) }
func (h *srcHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// merge streams the union of srcs, term by term, into sink. Sources must
// cover increasing, disjoint row ranges in slice order; a term's postings
// are emitted source by source, so rows stay increasing.
func merge(srcs []runSource, sink postingSink) error {
	h := &srcHeap{terms: make([][]byte, len(srcs)), dfs: make([]uint64, len(srcs)), xdfs: make([]uint64, len(srcs))}
	advance := func(i int) error {
		t, df, xdf, ok, err := srcs[i].nextTerm()
		if err != nil {
			return err
		}
		if ok {
			h.terms[i], h.dfs[i], h.xdfs[i] = t, df, xdf
			heap.Push(h, i)
		}
		return nil
	}
	for i := range srcs {
		if err := advance(i); err != nil {
			return err
		}
	}
	var group []int
	var term []byte
	lastRow := int64(-1)
	for h.Len() > 0 {
		group = group[:0]
		first := heap.Pop(h).(int)
		group = append(group, first)
		term = append(term[:0], h.terms[first]...)
		df, xdf := h.dfs[first], h.xdfs[first]
		for h.Len() > 0 && bytes.Equal(h.terms[h.idx[0]], term) {
			i := heap.Pop(h).(int)
			group = append(group, i)
			df += h.dfs[i]
			xdf += h.xdfs[i]
		}
		slices.Sort(group)
		if err := sink.beginTerm(term, df, xdf); err != nil {
			return err
		}
		lastRow = -1
		for _, i := range group {
			for range h.dfs[i] {
				row, tf, err := srcs[i].posting()
				if err != nil {
					return err
				}
				if int64(row) <= lastRow {
					return fmt.Errorf("bm25: merge: term %q row %d after row %d (runs out of order)", term, row, lastRow)
				}
				lastRow = int64(row)
				if err := sink.add(row, tf); err != nil {
					return err
				}
			}
		}
		if err := sink.endTerm(); err != nil {
			return err
		}
		for _, i := range group {
			if err := advance(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// runWriter is a postingSink that writes a run.
type runWriter struct {
	w    *bufio.Writer
	last int32
	buf  [2 * binary.MaxVarintLen64]byte
}

func (rw *runWriter) beginTerm(term []byte, df, xdf uint64) error {
	b := binary.AppendUvarint(rw.buf[:0], uint64(len(term)))
	rw.w.Write(b)
	rw.w.Write(term)
	b = binary.AppendUvarint(rw.buf[:0], df)
	rw.w.Write(binary.AppendUvarint(b, xdf))
	rw.last = -1
	return nil
}

func (rw *runWriter) add(row int32, tf uint32) error {
	b := binary.AppendUvarint(rw.buf[:0], uint64(row-rw.last-1))
	b = binary.AppendUvarint(b, uint64(tf))
	rw.last = row
	_, err := rw.w.Write(b)
	return err
}

func (rw *runWriter) endTerm() error { return nil }

// globalStats are the corpus-wide statistics that a shard's file is scored
// with (FlagShard, see FORMAT): the same as one index over the whole
// corpus would have, so that the shards' scores are that index's.
type globalStats struct {
	firstRow  uint32 // corpus row of the shard's row 0
	totalRows uint32 // rows of the corpus
	docCount  uint32 // corpus rows with at least one term
	sumTF     uint64 // terms in the corpus
}

// avgdl is the corpus's average length (lengthStats.avgdl of its counts).
func (g globalStats) avgdl() float32 {
	st := lengthStats{docCount: g.docCount, sumTF: g.sumTF}
	return st.avgdl()
}

// indexWriter writes the terms of one index file (format version
// formatVersion, 3; bm25/doc.go FORMAT): postings straight into
// the output, skip entries, term entries, term bytes and (for a shard) the
// corpus-wide document frequencies into side files that are appended at
// the end. A term is begin, add for each of its postings, end.
type indexWriter struct {
	out                *bufio.Writer
	skipsW, entriesW   *bufio.Writer
	blobW, gdfW        *bufio.Writer // gdfW: shards only
	gcrc               uint32        // CRC-32C of the global df section
	norm               *normTable
	docLens            []uint32
	slots              *normSlots
	postLen, numBlocks uint64
	blobLen            uint64
	numTerms           int
	chunkCRCs          []byte
	chunkEntries       []byte // current dictionary chunk
	chunkBlob          []byte

	// Current term.
	term    []byte
	gdf     uint64 // its corpus-wide df (shards)
	n       uint64
	postOff uint64
	skipIdx uint64
	prev    int32
	crc     uint32
	maxX    float32
	skipBuf []byte
	docs    [BlockSize]int32
	tfs     [BlockSize]uint32
	nb      int
	blk     []byte
}

func (w *indexWriter) begin(term []byte, gdf uint64) error {
	if len(term) == 0 || len(term) > math.MaxUint16 {
		return fmt.Errorf("%w: term of %d bytes", ErrTooLarge, len(term))
	}
	if gdf > math.MaxUint32 {
		return fmt.Errorf("%w: term %q df %d", ErrTooLarge, term, gdf)
	}
	w.term = append(w.term[:0], term...)
	w.gdf, w.n, w.nb = gdf, 0, 0
	w.postOff, w.skipIdx = w.postLen, w.numBlocks
	w.prev, w.crc, w.maxX = -1, 0, 0
	w.skipBuf = w.skipBuf[:0]
	return nil
}

func (w *indexWriter) add(row int32, tf uint32) error {
	w.docs[w.nb], w.tfs[w.nb] = row, tf
	w.nb++
	w.n++
	if w.nb == BlockSize {
		return w.flushBlock()
	}
	return nil
}

func (w *indexWriter) flushBlock() error {
	if w.nb == 0 {
		return nil
	}
	w.blk = w.blk[:0]
	m := float32(0)
	n := w.nb
	for i := 0; i < n; i++ {
		w.blk = append(w.blk, w.slots.slot(w.docLens[w.docs[i]]))
	}
	for i := 0; i < n; i++ {
		w.blk = append(w.blk, uint8(min(w.tfs[i], tfEscape)))
	}
	prev := w.prev
	for i := 0; i < n; i++ {
		w.blk = binary.AppendUvarint(w.blk, uint64(w.docs[i]-prev-1))
		prev = w.docs[i]
		m = max(m, tfNorm(w.tfs[i], w.norm.get(w.docLens[w.docs[i]])))
	}
	for i := 0; i < n; i++ {
		if w.blk[i] == normEscape {
			w.blk = le.AppendUint32(w.blk, w.docLens[w.docs[i]])
		}
	}
	for i := 0; i < n; i++ {
		if w.blk[n+i] == tfEscape {
			w.blk = le.AppendUint32(w.blk, w.tfs[i])
		}
	}
	w.prev = prev
	w.maxX = max(w.maxX, m)
	w.crc = crc32.Update(w.crc, castagnoli, w.blk)
	if _, err := w.out.Write(w.blk); err != nil {
		return err
	}
	w.skipBuf = le.AppendUint32(w.skipBuf, uint32(prev))
	w.skipBuf = le.AppendUint32(w.skipBuf, math.Float32bits(m))
	w.skipBuf = le.AppendUint32(w.skipBuf, uint32(len(w.blk)))
	w.postLen += uint64(len(w.blk))
	w.numBlocks++
	w.nb = 0
	return nil
}

// end writes the current term's entry; its df is the number of postings
// added.
func (w *indexWriter) end() error {
	if err := w.flushBlock(); err != nil {
		return err
	}
	if w.n == 0 || w.n > math.MaxUint32 || (w.gdfW != nil && w.gdf < w.n) {
		return fmt.Errorf("bm25: term %q has %d postings and corpus-wide df %d (internal error)", w.term, w.n, w.gdf)
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.skipBuf)
	if _, err := w.skipsW.Write(w.skipBuf); err != nil {
		return err
	}
	e := le.AppendUint64(nil, w.blobLen)
	e = le.AppendUint64(e, w.postOff)
	e = le.AppendUint64(e, w.skipIdx)
	e = le.AppendUint32(e, uint32(w.n))
	e = le.AppendUint32(e, math.Float32bits(w.maxX))
	e = le.AppendUint32(e, w.crc)
	e = le.AppendUint16(e, uint16(len(w.term)))
	e = le.AppendUint16(e, 0)
	w.chunkEntries = append(w.chunkEntries, e...)
	w.chunkBlob = append(w.chunkBlob, w.term...)
	if w.gdfW != nil {
		var b [4]byte
		le.PutUint32(b[:], uint32(w.gdf))
		w.gcrc = crc32.Update(w.gcrc, castagnoli, b[:])
		if _, err := w.gdfW.Write(b[:]); err != nil {
			return err
		}
	}
	w.blobLen += uint64(len(w.term))
	w.numTerms++
	if w.numTerms > math.MaxUint32 {
		return fmt.Errorf("%w: more than 2^32-1 terms", ErrTooLarge)
	}
	if w.numTerms%chunkTerms == 0 {
		return w.flushChunk()
	}
	return nil
}

func (w *indexWriter) flushChunk() error {
	if len(w.chunkEntries) == 0 {
		return nil
	}
	crc := crc32.Update(0, castagnoli, w.chunkEntries)
	crc = crc32.Update(crc, castagnoli, w.chunkBlob)
	w.chunkCRCs = le.AppendUint32(w.chunkCRCs, crc)
	w.entriesW.Write(w.chunkEntries)
	_, err := w.blobW.Write(w.chunkBlob)
	w.chunkEntries, w.chunkBlob = w.chunkEntries[:0], w.chunkBlob[:0]
	return err
}

// fileSink is the postingSink of an unsharded index: every posting goes
// to its one file.
type fileSink struct {
	w  *indexWriter
	df uint64
}

func (s *fileSink) beginTerm(term []byte, df, xdf uint64) error {
	if xdf != 0 {
		return fmt.Errorf("bm25: term %q counted in %d rows of unwritten shards by an unsharded build (internal error)", term, xdf)
	}
	s.df = df
	return s.w.begin(term, df)
}

func (s *fileSink) add(row int32, tf uint32) error { return s.w.add(row, tf) }

func (s *fileSink) endTerm() error {
	if s.w.n != s.df {
		return fmt.Errorf("bm25: term %q has %d postings, runs said %d (internal error)", s.w.term, s.w.n, s.df)
	}
	return s.w.end()
}

// indexFile is one index file being written atomically: the output, its
// side files and the writer of its terms.
type indexFile struct {
	path     string
	f        *atomicfile.Writer
	side     []*os.File // skip entries, term entries, term bytes, global dfs (shards)
	out      *bufio.Writer
	lcrc     uint32 // CRC-32C of the document lengths section
	w        *indexWriter
	k1, b    float32
	numDocs  int
	docCount uint32
	sumTF    uint64
	g        *globalStats
}

// createIndexFile starts the file at path (written through
// atomicfile, side files in tempDir) for the rows of docLens, scored with
// g's corpus-wide statistics when g is non-nil (a shard), else with its
// own. bufSize is the buffer of the output and of each side file.
func createIndexFile(path, tempDir string, k1, b float32, docLens []uint32, g *globalStats, bufSize int) (x *indexFile, err error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, fmt.Errorf("bm25: write %s: %w", path, err)
	}
	x = &indexFile{path: path, f: f, k1: k1, b: b, numDocs: len(docLens), g: g}
	defer func() {
		if err != nil {
			x.abort()
		}
	}()
	nside := 3
	if g != nil {
		nside = 4
	}
	for range nside {
		s, err := os.CreateTemp(tempDir, "bm25-side-*")
		if err != nil {
			return nil, fmt.Errorf("bm25: write %s: %w", path, err)
		}
		x.side = append(x.side, s)
	}
	var st lengthStats
	for _, dl := range docLens {
		st.add(dl)
	}
	x.docCount, x.sumTF = st.docCount, st.sumTF
	avg := st.avgdl()
	if g != nil {
		avg = g.avgdl()
	}
	x.out = bufio.NewWriterSize(f, bufSize)
	x.out.Write(make([]byte, headerSize)) // rewritten at the end
	var b4 [4]byte
	for _, dl := range docLens {
		le.PutUint32(b4[:], dl)
		x.lcrc = crc32.Update(x.lcrc, castagnoli, b4[:])
		x.out.Write(b4[:])
	}
	x.w = &indexWriter{
		out:      x.out,
		skipsW:   bufio.NewWriterSize(x.side[0], bufSize),
		entriesW: bufio.NewWriterSize(x.side[1], bufSize),
		blobW:    bufio.NewWriterSize(x.side[2], bufSize),
		norm:     newNormTable(k1, b, avg),
		docLens:  docLens,
		slots:    newNormSlots(&st.count),
	}
	if g != nil {
		x.w.gdfW = bufio.NewWriterSize(x.side[3], bufSize)
	}
	return x, nil
}

// abort removes the side files and the unfinished output.
func (x *indexFile) abort() {
	x.closeSide()
	x.f.Abort()
}

func (x *indexFile) closeSide() {
	for _, s := range x.side {
		s.Close()
		os.Remove(s.Name())
	}
	x.side = nil
}

// finish appends the side files, writes the header and commits the file;
// on error it aborts it.
func (x *indexFile) finish() (err error) {
	defer func() {
		if err != nil {
			x.abort()
		}
	}()
	w := x.w
	if err = w.flushChunk(); err != nil {
		return fmt.Errorf("bm25: write %s: %w", x.path, err)
	}
	ws := []*bufio.Writer{w.skipsW, w.entriesW, w.blobW}
	for i, bw := range ws {
		if err = bw.Flush(); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.side[i].Name(), err)
		}
		if _, err = x.side[i].Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.side[i].Name(), err)
		}
		if _, err = io.Copy(x.out, x.side[i]); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.path, err)
		}
	}
	x.out.Write(w.chunkCRCs)
	if w.gdfW != nil {
		if err = w.gdfW.Flush(); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.side[3].Name(), err)
		}
		if _, err = x.side[3].Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.side[3].Name(), err)
		}
		if _, err = io.Copy(x.out, x.side[3]); err != nil {
			return fmt.Errorf("bm25: write %s: %w", x.path, err)
		}
	}
	if err = x.out.Flush(); err != nil {
		return fmt.Errorf("bm25: write %s: %w", x.path, err)
	}
	var hdr [headerSize]byte
	copy(hdr[0:8], magic)
	le.PutUint32(hdr[8:], formatVersion)
	flags := uint32(FlagNFC)
	if x.g != nil {
		flags |= FlagShard
	}
	le.PutUint32(hdr[12:], flags)
	le.PutUint32(hdr[16:], math.Float32bits(x.k1))
	le.PutUint32(hdr[20:], math.Float32bits(x.b))
	le.PutUint32(hdr[24:], uint32(x.numDocs))
	le.PutUint32(hdr[28:], uint32(w.numTerms))
	le.PutUint32(hdr[32:], x.docCount)
	le.PutUint32(hdr[36:], BlockSize)
	le.PutUint64(hdr[40:], x.sumTF)
	le.PutUint64(hdr[48:], w.postLen)
	le.PutUint64(hdr[56:], w.numBlocks)
	le.PutUint64(hdr[64:], w.blobLen)
	le.PutUint32(hdr[72:], x.lcrc)
	if g := x.g; g != nil {
		le.PutUint32(hdr[76:], g.firstRow)
		le.PutUint32(hdr[80:], g.totalRows)
		le.PutUint32(hdr[84:], g.docCount)
		le.PutUint64(hdr[88:], g.sumTF)
		le.PutUint32(hdr[96:], w.gcrc)
	}
	le.PutUint32(hdr[headerSize-4:], crc32.Checksum(hdr[:headerSize-4], castagnoli))
	if _, err = x.f.WriteAt(hdr[:], 0); err != nil {
		return fmt.Errorf("bm25: write %s: %w", x.f.TempName(), err)
	}
	x.closeSide()
	if err = x.f.Commit(); err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	return nil
}

// writeIndexFile writes the unsharded index file at path atomically,
// merging srcs (in row order) with the document lengths.
func writeIndexFile(path, tempDir string, k1, b float32, docLens []uint32, srcs []runSource) error {
	x, err := createIndexFile(path, tempDir, k1, b, docLens, nil, 1<<20)
	if err != nil {
		return err
	}
	if err := merge(srcs, &fileSink{w: x.w}); err != nil {
		x.abort()
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	return x.finish()
}
