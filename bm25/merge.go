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
// uvarint(df), then df (uvarint row gap, uvarint tf) pairs with
// gap = row - previous row - 1 (previous row = -1 before the first); an
// empty term (a single 0 byte) ends the run. Runs are private temporary
// files: they carry no checksum, but every value is range-checked on read.
const runMagic = "RLSBM25R"

// runSource yields terms in strictly increasing order, each with the
// postings of one contiguous row range (sources are merged in row order).
type runSource interface {
	// nextTerm moves to the next term; ok is false at the end.
	nextTerm() (term []byte, df uint64, ok bool, err error)
	// posting returns the next posting of the current term; it must be
	// called exactly df times before nextTerm.
	posting() (row int32, tf uint32, err error)
}

// postingSink receives the merged terms in order.
type postingSink interface {
	beginTerm(term []byte, df uint64) error
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

func (s *memSource) nextTerm() ([]byte, uint64, bool, error) {
	s.i++
	if s.i >= len(s.order) {
		return nil, 0, false, nil
	}
	id := s.order[s.i]
	s.p, s.row = s.m.terms[id].post, -1
	return []byte(s.m.names[id]), uint64(s.m.terms[id].df), true, nil
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

func (s *fileSource) nextTerm() ([]byte, uint64, bool, error) {
	if s.left != 0 {
		return nil, 0, false, fmt.Errorf("bm25: run %s: term %q has %d unread postings (internal error)", s.name, s.term, s.left)
	}
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, 0, false, s.fail("term length", err)
	}
	if n == 0 {
		return nil, 0, false, nil
	}
	if n > math.MaxUint16 {
		return nil, 0, false, s.fail(fmt.Sprintf("term length %d", n), nil)
	}
	s.term = slices.Grow(s.term[:0], int(n))[:n]
	if _, err := io.ReadFull(s.r, s.term); err != nil {
		return nil, 0, false, s.fail("term", err)
	}
	df, err := binary.ReadUvarint(s.r)
	if err != nil || df == 0 || df > uint64(s.numDocs) {
		return nil, 0, false, s.fail(fmt.Sprintf("df %d", df), err)
	}
	s.left, s.row = df, -1
	return s.term, df, true, nil
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
	h := &srcHeap{terms: make([][]byte, len(srcs)), dfs: make([]uint64, len(srcs))}
	advance := func(i int) error {
		t, df, ok, err := srcs[i].nextTerm()
		if err != nil {
			return err
		}
		if ok {
			h.terms[i], h.dfs[i] = t, df
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
		df := h.dfs[first]
		for h.Len() > 0 && bytes.Equal(h.terms[h.idx[0]], term) {
			i := heap.Pop(h).(int)
			group = append(group, i)
			df += h.dfs[i]
		}
		slices.Sort(group)
		if err := sink.beginTerm(term, df); err != nil {
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

func (rw *runWriter) beginTerm(term []byte, df uint64) error {
	b := binary.AppendUvarint(rw.buf[:0], uint64(len(term)))
	rw.w.Write(b)
	rw.w.Write(term)
	rw.w.Write(binary.AppendUvarint(rw.buf[:0], df))
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

// indexWriter is the postingSink that writes the index file (format
// version formatVersion, 3; bm25/doc.go FORMAT): postings
// straight into the output, skip entries, term entries and term bytes into
// side files that are appended at the end.
type indexWriter struct {
	out                *bufio.Writer
	skipsW, entriesW   *bufio.Writer
	blobW              *bufio.Writer
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
	df      uint64
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

func (w *indexWriter) beginTerm(term []byte, df uint64) error {
	if len(term) == 0 || len(term) > math.MaxUint16 {
		return fmt.Errorf("%w: term of %d bytes", ErrTooLarge, len(term))
	}
	if df > math.MaxUint32 {
		return fmt.Errorf("%w: term %q df %d", ErrTooLarge, term, df)
	}
	w.term = append(w.term[:0], term...)
	w.df, w.n, w.nb = df, 0, 0
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

func (w *indexWriter) endTerm() error {
	if err := w.flushBlock(); err != nil {
		return err
	}
	if w.n != w.df {
		return fmt.Errorf("bm25: term %q has %d postings, runs said %d (internal error)", w.term, w.n, w.df)
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.skipBuf)
	if _, err := w.skipsW.Write(w.skipBuf); err != nil {
		return err
	}
	e := le.AppendUint64(nil, w.blobLen)
	e = le.AppendUint64(e, w.postOff)
	e = le.AppendUint64(e, w.skipIdx)
	e = le.AppendUint32(e, uint32(w.df))
	e = le.AppendUint32(e, math.Float32bits(w.maxX))
	e = le.AppendUint32(e, w.crc)
	e = le.AppendUint16(e, uint16(len(w.term)))
	e = le.AppendUint16(e, 0)
	w.chunkEntries = append(w.chunkEntries, e...)
	w.chunkBlob = append(w.chunkBlob, w.term...)
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

// writeIndexFile writes the index file (format version formatVersion) at
// path atomically, its header's document count, total length and average
// length derived from docLens as Open derives them (lengthStats),
// merging srcs (in row order) with the document lengths.
func writeIndexFile(path, tempDir string, k1, b float32, docLens []uint32, srcs []runSource) (err error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	tmp := f.TempName()
	var side []*os.File
	defer func() {
		for _, s := range side {
			s.Close()
			os.Remove(s.Name())
		}
		if err != nil {
			f.Abort()
		}
	}()
	for range 3 {
		s, err := os.CreateTemp(tempDir, "bm25-side-*")
		if err != nil {
			return fmt.Errorf("bm25: write %s: %w", path, err)
		}
		side = append(side, s)
	}

	var st lengthStats
	for _, dl := range docLens {
		st.add(dl)
	}
	out := bufio.NewWriterSize(f, 1<<20)
	out.Write(make([]byte, headerSize)) // rewritten at the end
	lcrc := crc32.New(castagnoli)
	lw := io.MultiWriter(out, lcrc)
	var b4 [4]byte
	for _, dl := range docLens {
		le.PutUint32(b4[:], dl)
		lw.Write(b4[:])
	}
	w := &indexWriter{
		out:      out,
		skipsW:   bufio.NewWriterSize(side[0], 1<<20),
		entriesW: bufio.NewWriterSize(side[1], 1<<20),
		blobW:    bufio.NewWriterSize(side[2], 1<<20),
		norm:     newNormTable(k1, b, st.avgdl()),
		docLens:  docLens,
		slots:    newNormSlots(&st.count),
	}
	if err = merge(srcs, w); err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	if err = w.flushChunk(); err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	for i, bw := range []*bufio.Writer{w.skipsW, w.entriesW, w.blobW} {
		if err = bw.Flush(); err != nil {
			return fmt.Errorf("bm25: write %s: %w", side[i].Name(), err)
		}
		if _, err = side[i].Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("bm25: write %s: %w", side[i].Name(), err)
		}
		if _, err = io.Copy(out, side[i]); err != nil {
			return fmt.Errorf("bm25: write %s: %w", path, err)
		}
	}
	out.Write(w.chunkCRCs)
	if err = out.Flush(); err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	var hdr [headerSize]byte
	copy(hdr[0:8], magic)
	le.PutUint32(hdr[8:], formatVersion)
	le.PutUint32(hdr[12:], FlagNFC) // flags
	le.PutUint32(hdr[16:], math.Float32bits(k1))
	le.PutUint32(hdr[20:], math.Float32bits(b))
	le.PutUint32(hdr[24:], uint32(len(docLens)))
	le.PutUint32(hdr[28:], uint32(w.numTerms))
	le.PutUint32(hdr[32:], st.docCount)
	le.PutUint32(hdr[36:], BlockSize)
	le.PutUint64(hdr[40:], st.sumTF)
	le.PutUint64(hdr[48:], w.postLen)
	le.PutUint64(hdr[56:], w.numBlocks)
	le.PutUint64(hdr[64:], w.blobLen)
	le.PutUint32(hdr[72:], lcrc.Sum32())
	le.PutUint32(hdr[headerSize-4:], crc32.Checksum(hdr[:headerSize-4], castagnoli))
	if _, err = f.WriteAt(hdr[:], 0); err != nil {
		return fmt.Errorf("bm25: write %s: %w", tmp, err)
	}
	if err = f.Commit(); err != nil {
		return fmt.Errorf("bm25: %w", err)
	}
	return nil
}
