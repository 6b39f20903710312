package bm25

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// File format constants; the layout is documented in doc.go (FORMAT).
const (
	magic         = "RLSBM25\x00"
	formatVersion = 3
	headerSize    = 128
	// BlockSize is the number of postings per block (the unit of skipping,
	// of block-max bounds and of decoding), Lucene's and PISA's 128.
	BlockSize  = 128
	skipSize   = 12   // lastRow u32, maxX f32, byte length u32
	entrySize  = 40   // see doc.go
	chunkTerms = 4096 // terms per dictionary checksum chunk
	// maxFileSection bounds every length field read from a header so that
	// sums of hostile lengths cannot overflow.
	maxFileSection = 1 << 50
)

// Header flags (offset 12). Every index this version writes sets FlagNFC;
// an index without it was analyzed without Unicode normalization, so its
// terms for non-NFC text differ from the terms of today's queries, and Open
// refuses it with ErrAnalyzer.
const (
	// FlagNFC: the terms were analyzed after Unicode NFC normalization
	// (Analyze step 0).
	FlagNFC = 1 << 0
	// FlagShard: the file is one shard of a corpus (NewShardBuilder) and
	// scores with the corpus-wide statistics it records (header offsets
	// 76 to 100 and the global df section, see FORMAT).
	FlagShard = 1 << 1
	// knownFlags are the flags this version reads; FlagNFC is required.
	knownFlags = FlagNFC | FlagShard
)

// ErrAnalyzer is wrapped by the error for an index whose header says its
// terms were made by a different analyzer than this version's (an index
// built before NFC normalization was added). The message names the file
// and asks to rebuild it; such a file is intact, not corrupt.
var ErrAnalyzer = errors.New("bm25: index built with an older analyzer")

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// ErrCorrupt is wrapped by every error for a file that is not a complete,
// intact index (bad magic, unknown version, truncated, checksum mismatch,
// inconsistent sections), whether found by Open, by a search that reads the
// damaged part, or by Check. The message names the section and the byte
// offset.
var ErrCorrupt = errors.New("bm25: corrupt index")

// Index is a BM25 inverted index opened by Open, backed by a read-only
// memory map of the file (a plain read on systems without mmap).
//
// An Index is safe for concurrent use by any number of goroutines, except
// Close, which must be called once no search is running; an Index must not
// be used after Close.
type Index struct {
	k1, b    float32
	numDocs  int
	numTerms int
	docCount uint32  // documents with at least one term (Lucene's docCount)
	sumTF    uint64  // total terms in the collection (Lucene's sumTotalTermFreq)
	avgdl    float32 // sumTF / docCount, as Lucene computes it; a shard's: the corpus's

	// A shard (FlagShard) scores with the corpus's statistics: g, and gdf
	// (4 bytes per term: its corpus-wide df). For an unsharded index g
	// holds the index's own (firstRow 0, totalRows numDocs) and gdf is nil.
	g      globalStats
	gdf    []byte
	offGDF int64

	data    []byte // the whole file
	release func() error
	// Sections (sub-slices of data) and their file offsets.
	docLens, postings, skips, entries, blob, chunks []byte
	offPost, offSkip, offEntry, offBlob, offChunk   int64
	numBlocks                                       uint64

	normInv []float32 // per document: 1 / (k1 * (1 - b + b*dl/avgdl))
	// slots maps a document length to the norm slot its postings carry;
	// normVals[s] is normInv of slot s's length (normEscape: none, the
	// block holds the length, whose norm norms gives).
	slots    *normSlots
	normVals [256]float32
	norms    *normTable

	noCRC   bool            // fuzzing only: skip checksums to reach the structural checks
	termOK  []atomic.Uint64 // bit per term: checksum verified
	chunkOK []atomic.Uint64 // bit per dictionary chunk: checksum verified

	pool     sync.Pool // *scratch
	closeErr error
	closed   sync.Once
}

// Open memory-maps the index file at path and checks its header, the sizes
// of its sections and the document lengths (checksum, count and sum), and
// precomputes the per-document length norms (4 bytes per row of heap). It
// does not read the postings or the dictionary: their checksums are verified
// lazily, the first time a search uses a term or a dictionary chunk, and all
// at once by Check. Open is O(rows), not O(postings).
//
// A truncated, corrupt or foreign file, or one of an older format (versions
// 1 and 2, before the norm slots of format 3), returns an error wrapping
// ErrCorrupt that names the offending section and offset (for an old
// format: its version, and to rebuild the index); an intact file
// built before NFC analysis (header without FlagNFC) returns one wrapping
// ErrAnalyzer that names the file and asks to rebuild it; I/O failures
// return the *os.PathError wrapped. Close the Index to unmap the file. The
// file must not be truncated or rewritten in place while open (atomic
// replacement by rename, as Builder.WriteFile does, is safe).
func Open(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bm25: open index: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("bm25: open index: %w", err)
	}
	data, release, err := mapFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("bm25: open index %s: %w", path, err)
	}
	ix, err := parse(data, true)
	if err != nil {
		release()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ix.release = release
	return ix, nil
}

// Close unmaps the file. It is idempotent; the Index must not be used afterwards.
func (ix *Index) Close() error {
	ix.closed.Do(func() {
		if ix.release != nil {
			ix.closeErr = ix.release()
		}
		ix.data, ix.docLens, ix.postings, ix.skips, ix.entries, ix.blob, ix.chunks = nil, nil, nil, nil, nil, nil, nil
		ix.numTerms, ix.numDocs, ix.normInv = 0, 0, nil
	})
	return ix.closeErr
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// parse checks the header, the section sizes and the document lengths of an
// index held in data. verifyCRC is false only in the fuzz test, so that it
// reaches the structural checks.
func parse(data []byte, verifyCRC bool) (*Index, error) {
	if len(data) >= 12 && string(data[:8]) == magic {
		switch le.Uint32(data[8:]) {
		case 1, 2:
			return nil, corrupt("header at offset 8: format version %d is no longer supported (version %d adds a norm slot to every posting, see the bm25 package documentation), rebuild the index with this version (rlsearch index)", le.Uint32(data[8:]), formatVersion)
		}
	}
	if len(data) < headerSize {
		return nil, corrupt("file is %d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	if string(data[:8]) != magic {
		return nil, corrupt("header at offset 0: bad magic %q, want %q", data[:8], magic)
	}
	if v := le.Uint32(data[8:]); v != formatVersion {
		return nil, corrupt("header at offset 8: unsupported version %d, want %d", v, formatVersion)
	}
	if verifyCRC {
		if got, want := crc32.Checksum(data[:headerSize-4], castagnoli), le.Uint32(data[headerSize-4:]); got != want {
			return nil, corrupt("header checksum at offset %d: CRC-32C of bytes [0, %d) is %#08x, file says %#08x", headerSize-4, headerSize-4, got, want)
		}
	}
	if f := le.Uint32(data[12:]); f&^knownFlags != 0 {
		return nil, corrupt("header at offset 12: unknown flags %#x", f)
	} else if f&FlagNFC == 0 {
		return nil, fmt.Errorf("%w (header flags %#x at offset 12 lack FlagNFC: its terms were analyzed without Unicode NFC normalization, so queries with accents or other non-ASCII text would miss): rebuild the index with this version (rlsearch index)", ErrAnalyzer, f)
	}
	ix := &Index{
		k1:        math.Float32frombits(le.Uint32(data[16:])),
		b:         math.Float32frombits(le.Uint32(data[20:])),
		numDocs:   int(le.Uint32(data[24:])),
		numTerms:  int(le.Uint32(data[28:])),
		docCount:  le.Uint32(data[32:]),
		sumTF:     le.Uint64(data[40:]),
		numBlocks: le.Uint64(data[56:]),
		noCRC:     !verifyCRC,
		data:      data,
	}
	postLen, blobLen := le.Uint64(data[48:]), le.Uint64(data[64:])
	if k1 := ix.k1; !(k1 >= 0) || math.IsInf(float64(k1), 0) {
		return nil, corrupt("header at offset 16: k1 = %v", k1)
	}
	if b := ix.b; !(b >= 0 && b <= 1) {
		return nil, corrupt("header at offset 20: b = %v", b)
	}
	if ix.numDocs > math.MaxInt32 {
		return nil, corrupt("header at offset 24: %d documents", ix.numDocs)
	}
	if ix.docCount > uint32(ix.numDocs) {
		return nil, corrupt("header at offset 32: docCount %d > %d documents", ix.docCount, ix.numDocs)
	}
	if bs := le.Uint32(data[36:]); bs != BlockSize {
		return nil, corrupt("header at offset 36: block size %d, want %d", bs, BlockSize)
	}
	shard := le.Uint32(data[12:])&FlagShard != 0
	reserved := 76
	if shard {
		reserved = 100
		ix.g = globalStats{firstRow: le.Uint32(data[76:]), totalRows: le.Uint32(data[80:]), docCount: le.Uint32(data[84:]), sumTF: le.Uint64(data[88:])}
		g := ix.g
		if g.totalRows > math.MaxInt32 || uint64(g.firstRow)+uint64(ix.numDocs) > uint64(g.totalRows) {
			return nil, corrupt("header at offset 76: shard of %d rows from corpus row %d, beyond the corpus's %d rows", ix.numDocs, g.firstRow, g.totalRows)
		}
		if g.docCount < ix.docCount || g.docCount > g.totalRows || g.sumTF < ix.sumTF || uint64(g.totalRows)-uint64(ix.numDocs) < uint64(g.docCount-ix.docCount) {
			return nil, corrupt("header at offset 84: corpus-wide document count %d and %d terms cannot hold the shard's %d and %d", g.docCount, g.sumTF, ix.docCount, ix.sumTF)
		}
	} else {
		ix.g = globalStats{totalRows: uint32(ix.numDocs), docCount: ix.docCount, sumTF: ix.sumTF}
	}
	for off := reserved; off < headerSize-4; off++ {
		if data[off] != 0 {
			return nil, corrupt("header at offset %d: reserved byte is %#x", off, data[off])
		}
	}
	if postLen > maxFileSection || blobLen > maxFileSection || ix.numBlocks > maxFileSection {
		return nil, corrupt("header at offset 48: section lengths %d, %d blocks, %d are absurd", postLen, ix.numBlocks, blobLen)
	}
	// Every term has at least one block, every block at least one posting
	// of at least 2 bytes, every term at least one byte.
	if ix.numBlocks < uint64(ix.numTerms) || postLen < 2*ix.numBlocks || blobLen < uint64(ix.numTerms) {
		return nil, corrupt("header at offset 48: %d postings bytes, %d blocks and %d term bytes cannot hold %d terms", postLen, ix.numBlocks, blobLen, ix.numTerms)
	}
	sections := []struct {
		name string
		size uint64
	}{
		{"document lengths", 4 * uint64(ix.numDocs)},
		{"postings", postLen},
		{"skip entries", skipSize * ix.numBlocks},
		{"term entries", entrySize * uint64(ix.numTerms)},
		{"term bytes", blobLen},
		{"chunk checksums", 4 * uint64((ix.numTerms+chunkTerms-1)/chunkTerms)},
		{"global dfs", 0},
	}
	if shard {
		sections[6].size = 4 * uint64(ix.numTerms)
	}
	off := uint64(headerSize)
	var parts [7][]byte
	var offs [7]int64
	for i, s := range sections {
		if off+s.size > uint64(len(data)) {
			return nil, corrupt("truncated: section %q at offset %d needs %d bytes, file has %d bytes", s.name, off, s.size, len(data))
		}
		parts[i] = data[off : off+s.size : off+s.size]
		offs[i] = int64(off)
		off += s.size
	}
	if off != uint64(len(data)) {
		return nil, corrupt("%d trailing bytes after the last section at offset %d", uint64(len(data))-off, off)
	}
	ix.docLens, ix.postings, ix.skips, ix.entries, ix.blob, ix.chunks = parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	ix.offPost, ix.offSkip, ix.offEntry, ix.offBlob, ix.offChunk = offs[1], offs[2], offs[3], offs[4], offs[5]
	if shard {
		ix.gdf, ix.offGDF = parts[6], offs[6]
	}
	if verifyCRC {
		if got, want := crc32.Checksum(ix.docLens, castagnoli), le.Uint32(data[72:]); got != want {
			return nil, corrupt("document lengths at offset %d: CRC-32C is %#08x, header says %#08x", headerSize, got, want)
		}
		if shard {
			if got, want := crc32.Checksum(ix.gdf, castagnoli), le.Uint32(data[96:]); got != want {
				return nil, corrupt("global dfs at offset %d: CRC-32C is %#08x, header says %#08x", ix.offGDF, got, want)
			}
		}
	}
	if err := ix.initNorms(); err != nil {
		return nil, err
	}
	ix.termOK = make([]atomic.Uint64, (ix.numTerms+63)/64)
	ix.chunkOK = make([]atomic.Uint64, ((ix.numTerms+chunkTerms-1)/chunkTerms+63)/64)
	return ix, nil
}

// lengthStats are what the writer (createIndexFile) and Open (initNorms)
// both derive from the document lengths, in one place so that they cannot
// disagree: the non-empty documents (Lucene's docCount, the denominator of
// idf and of the average length), the total length (sumTotalTermFreq),
// and the histogram of lengths below slotMaxLen (the norm slots).
type lengthStats struct {
	docCount uint32
	sumTF    uint64
	count    [slotMaxLen]uint64
}

// add counts one document of dl terms.
func (st *lengthStats) add(dl uint32) {
	if dl > 0 {
		st.docCount++
	}
	if dl < slotMaxLen {
		st.count[dl]++
	}
	st.sumTF += uint64(dl)
}

// avgdl is the average length of a non-empty document, as Lucene computes
// it: avgFieldLength = (float) (sumTotalTermFreq / (double) docCount); 0
// without one.
func (st *lengthStats) avgdl() float32 {
	if st.docCount == 0 {
		return 0
	}
	return float32(float64(st.sumTF) / float64(st.docCount))
}

// initNorms checks the document lengths against the header and precomputes
// the length norms. A shard's average length is the corpus's, so that its
// norms, and the block bounds its writer stored, are those of one index
// over the corpus.
func (ix *Index) initNorms() error {
	var st lengthStats
	for d := 0; d < ix.numDocs; d++ {
		st.add(le.Uint32(ix.docLens[4*d:]))
	}
	if st.docCount != ix.docCount || st.sumTF != ix.sumTF {
		return corrupt("document lengths at offset %d: %d non-empty documents and %d terms, header says %d and %d", headerSize, st.docCount, st.sumTF, ix.docCount, ix.sumTF)
	}
	ix.avgdl = ix.g.avgdl()
	ix.normInv = make([]float32, ix.numDocs)
	nt := newNormTable(ix.k1, ix.b, ix.avgdl)
	for d := range ix.normInv {
		ix.normInv[d] = nt.get(le.Uint32(ix.docLens[4*d:]))
	}
	ix.slots, ix.norms = newNormSlots(&st.count), nt
	for s, dl := range ix.slots.lens {
		ix.normVals[s] = nt.get(dl)
	}
	return nil
}

// normEscape is the norm slot of a posting whose row's length has no slot
// of its own: the block holds that length (blockParts.escapedLen).
const normEscape = 255

// slotMaxLen bounds the document lengths that get a norm slot.
const slotMaxLen = 4096

// normSlots is the table of norm slots, a function of the document lengths
// only, so that the writer and Open derive the same one: the normEscape
// (255) most frequent lengths below slotMaxLen, by decreasing count, ties
// by increasing length, get slots 0, 1, ...; every other length (rarer,
// or of slotMaxLen terms or more) gets normEscape. Passages of ~100 words
// have few distinct lengths (825 at 5M generated wiki passages, of which
// the top 255 cover 99.3% of the rows and about 96% of the terms).
type normSlots struct {
	of   [slotMaxLen]uint8 // slot per length
	lens []uint32          // length per slot
}

func newNormSlots(count *[slotMaxLen]uint64) *normSlots {
	lens := make([]uint32, 0, normEscape)
	for dl, c := range count {
		if c > 0 {
			lens = append(lens, uint32(dl))
		}
	}
	slices.SortStableFunc(lens, func(a, b uint32) int { return cmp.Compare(count[b], count[a]) })
	ns := &normSlots{lens: lens[:min(len(lens), normEscape)]}
	for i := range ns.of {
		ns.of[i] = normEscape
	}
	for s, dl := range ns.lens {
		ns.of[dl] = uint8(s)
	}
	return ns
}

// slot is the norm slot of a row of dl terms.
func (ns *normSlots) slot(dl uint32) uint8 {
	if dl < slotMaxLen {
		return ns.of[dl]
	}
	return normEscape
}

// normTable caches normInverse for short documents (the vast majority), so
// that building the per-document table costs a lookup, not a division.
type normTable struct {
	k1, b, avgdl float32
	tab          []float32
}

func newNormTable(k1, b, avgdl float32) *normTable {
	nt := &normTable{k1: k1, b: b, avgdl: avgdl, tab: make([]float32, 4096)}
	for i := range nt.tab {
		nt.tab[i] = normInverse(k1, b, float32(i), avgdl)
	}
	return nt
}

func (nt *normTable) get(dl uint32) float32 {
	if dl < uint32(len(nt.tab)) {
		return nt.tab[dl]
	}
	return normInverse(nt.k1, nt.b, float32(dl), nt.avgdl)
}

// normInverse is Lucene 9 BM25Similarity's cached 1 / (k1 * ((1 - b) + b * dl / avgdl)),
// in float32 as Lucene computes it (there with the quantised dl). The
// explicit conversions keep every step rounded to float32 (no fused ops).
func normInverse(k1, b, dl, avgdl float32) float32 {
	q := float32(float32(b*dl) / avgdl)
	return 1 / float32(k1*float32(float32(1-b)+q))
}

// idf is Lucene 9 BM25Similarity.idf: ln(1 + (docCount - df + 0.5) / (df + 0.5)),
// computed in float64 and rounded to float32.
func idf(df, docCount uint32) float32 {
	return float32(math.Log(1 + (float64(docCount)-float64(df)+0.5)/(float64(df)+0.5)))
}

// tfNorm is the float32 product tf · normInverse(dl) that Lucene's
// BM25Scorer forms; the term score is monotone in it (see termScore), which
// makes its maximum over a block ("maxX" in the file) an exact block bound.
func tfNorm(tf uint32, normInv float32) float32 {
	return float32(float32(tf) * normInv)
}

// termScore is Lucene 9 BM25Scorer.score: weight - weight / (1 + tf · normInverse),
// with weight = boost · idf, each step rounded to float32. For weight > 0 it
// is non-decreasing in x = tfNorm(tf, normInv), because IEEE rounding is
// monotone and every step (1 + x, weight / ·, weight - ·) is monotone.
func termScore(weight, x float32) float32 {
	return weight - float32(weight/float32(1+x))
}

// NumDocs is the number of rows in the index (documents added, including
// those without any term).
func (ix *Index) NumDocs() int { return ix.numDocs }

// NumTerms is the number of distinct terms.
func (ix *Index) NumTerms() int { return ix.numTerms }

// AvgDocLen is the mean number of terms per non-empty document (Lucene's
// avgdl = sumTotalTermFreq / docCount) that scores use: for a shard, the
// corpus's. 0 for an index (or corpus) without terms.
func (ix *Index) AvgDocLen() float64 { return float64(ix.avgdl) }

// ShardInfo describes the rows an index holds within its corpus and the
// corpus-wide statistics its scores use.
type ShardInfo struct {
	// Sharded is true for a shard file (NewShardBuilder).
	Sharded bool
	// FirstRow is the corpus row of the index's row 0 (0 unsharded), and
	// TotalRows the rows of the corpus (NumDocs unsharded).
	FirstRow, TotalRows int
	// DocCount is the corpus's number of rows with at least one term and
	// SumTF its number of terms (Lucene's docCount and sumTotalTermFreq).
	DocCount int
	SumTF    uint64
}

// Shard reports which rows of its corpus the index holds: corpus row =
// FirstRow + row. Safe for concurrent use.
func (ix *Index) Shard() ShardInfo {
	return ShardInfo{Sharded: ix.gdf != nil, FirstRow: int(ix.g.firstRow), TotalRows: int(ix.g.totalRows), DocCount: int(ix.g.docCount), SumTF: ix.g.sumTF}
}

// scoreDF is the document frequency that term t's idf uses: the
// corpus-wide one for a shard, else its df.
func (ix *Index) scoreDF(t int, df uint32) uint32 {
	if ix.gdf == nil {
		return df
	}
	// Clamped so that a hostile file (whose checksum was forged) cannot
	// make an idf negative or NaN; Check reports such a value.
	return min(max(df, le.Uint32(ix.gdf[4*t:])), ix.g.docCount)
}

// Params returns the BM25 parameters the index was built with.
func (ix *Index) Params() (k1, b float64) { return float64(ix.k1), float64(ix.b) }

// DocLen returns the number of terms of row (0 for a row out of range).
func (ix *Index) DocLen(row int32) int {
	if row < 0 || int(row) >= ix.numDocs {
		return 0
	}
	return int(le.Uint32(ix.docLens[4*int(row):]))
}

// termEntry is one decoded term entry (see FORMAT in doc.go).
type termEntry struct {
	blobOff, postOff, skipIdx uint64
	df                        uint32
	maxX                      float32
	crc                       uint32
	termLen                   uint16
}

func (ix *Index) entry(t int) termEntry {
	e := ix.entries[entrySize*t : entrySize*t+entrySize]
	return termEntry{
		blobOff: le.Uint64(e), postOff: le.Uint64(e[8:]), skipIdx: le.Uint64(e[16:]),
		df: le.Uint32(e[24:]), maxX: math.Float32frombits(le.Uint32(e[28:])),
		crc: le.Uint32(e[32:]), termLen: le.Uint16(e[36:]),
	}
}

func testBit(bits []atomic.Uint64, i int) bool { return bits[i>>6].Load()&(1<<(i&63)) != 0 }
func setBit(bits []atomic.Uint64, i int)       { bits[i>>6].Or(1 << (i & 63)) }

// termBytes returns the bytes of term t, after verifying (once) the
// checksum of the dictionary chunk that holds it.
func (ix *Index) termBytes(t int) ([]byte, error) {
	if err := ix.verifyChunk(t / chunkTerms); err != nil {
		return nil, err
	}
	e := ix.entry(t)
	if e.blobOff > uint64(len(ix.blob)) || uint64(e.termLen) > uint64(len(ix.blob))-e.blobOff {
		return nil, corrupt("term entries at offset %d: term %d bytes [%d, +%d) outside the %d term bytes", ix.offEntry+int64(entrySize*t), t, e.blobOff, e.termLen, len(ix.blob))
	}
	return ix.blob[e.blobOff : e.blobOff+uint64(e.termLen)], nil
}

// verifyChunk checks the CRC-32C of dictionary chunk c (its term entries
// and their term bytes) the first time it is used.
func (ix *Index) verifyChunk(c int) error {
	if ix.noCRC || testBit(ix.chunkOK, c) {
		return nil
	}
	lo, hi := c*chunkTerms, min((c+1)*chunkTerms, ix.numTerms)
	first, last := ix.entry(lo), ix.entry(hi-1)
	end := last.blobOff + uint64(last.termLen)
	if first.blobOff > end || end > uint64(len(ix.blob)) {
		return corrupt("term entries at offset %d: chunk %d term bytes [%d, %d) outside the %d term bytes", ix.offEntry+int64(entrySize*lo), c, first.blobOff, end, len(ix.blob))
	}
	crc := crc32.Update(0, castagnoli, ix.entries[entrySize*lo:entrySize*hi])
	crc = crc32.Update(crc, castagnoli, ix.blob[first.blobOff:end])
	if want := le.Uint32(ix.chunks[4*c:]); crc != want {
		return corrupt("term entries at offset %d: dictionary chunk %d (terms %d to %d) has CRC-32C %#08x, chunk checksums at offset %d say %#08x", ix.offEntry+int64(entrySize*lo), c, lo, hi-1, crc, ix.offChunk+int64(4*c), want)
	}
	setBit(ix.chunkOK, c)
	return nil
}

// lookup returns the term id of term by binary search over the sorted
// terms, -1 when absent, or an ErrCorrupt error.
func (ix *Index) lookup(term string) (int, error) {
	lo, hi := 0, ix.numTerms
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		t, err := ix.termBytes(m)
		if err != nil {
			return -1, err
		}
		if string(t) < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < ix.numTerms {
		t, err := ix.termBytes(lo)
		if err != nil {
			return -1, err
		}
		if string(t) == term {
			return lo, nil
		}
	}
	return -1, nil
}

// postingsOf returns the checked location of term t's postings: its skip
// entries and the postings bytes from its first block to the end of the
// section (blocks are bounds-checked as they are decoded). The first use
// of a term verifies its checksum.
func (ix *Index) postingsOf(t int) (e termEntry, skips, post []byte, err error) {
	e = ix.entry(t)
	nb := (uint64(e.df) + BlockSize - 1) / BlockSize
	if e.df == 0 || e.df > ix.docCount || e.skipIdx > ix.numBlocks || nb > ix.numBlocks-e.skipIdx || e.postOff > uint64(len(ix.postings)) {
		return e, nil, nil, corrupt("term entries at offset %d: term %d has df %d, first block %d, postings offset %d (of %d documents, %d blocks, %d postings bytes)",
			ix.offEntry+int64(entrySize*t), t, e.df, e.skipIdx, e.postOff, ix.docCount, ix.numBlocks, len(ix.postings))
	}
	skips = ix.skips[skipSize*e.skipIdx : skipSize*(e.skipIdx+nb)]
	post = ix.postings[e.postOff:]
	if ix.noCRC || testBit(ix.termOK, t) {
		return e, skips, post, nil
	}
	var n uint64
	for i := 0; i < len(skips); i += skipSize {
		n += uint64(le.Uint32(skips[i+8:]))
	}
	if n > uint64(len(post)) {
		return e, nil, nil, corrupt("skip entries at offset %d: term %d blocks span %d bytes, only %d postings bytes follow offset %d",
			ix.offSkip+int64(skipSize*e.skipIdx), t, n, len(post), ix.offPost+int64(e.postOff))
	}
	crc := crc32.Update(0, castagnoli, post[:n])
	crc = crc32.Update(crc, castagnoli, skips)
	if crc != e.crc {
		return e, nil, nil, corrupt("postings at offset %d: term %d postings and skip entries have CRC-32C %#08x, term entry at offset %d says %#08x",
			ix.offPost+int64(e.postOff), t, crc, ix.offEntry+int64(entrySize*t), e.crc)
	}
	setBit(ix.termOK, t)
	return e, skips, post, nil
}

// tfEscape is the tf byte of a posting whose tf does not fit it (>= 255):
// the block holds the tf among its escaped tfs.
const tfEscape = 255

// escSep and tfSep are normEscape and tfEscape as separators for bytes.Count.
var escSep, tfSep = []byte{normEscape}, []byte{tfEscape}

// blockParts are the parts of one block in the file besides its row gaps
// (see FORMAT): n norm slots, n tf bytes, and the escaped lengths and tfs
// (a little-endian uint32 each, in posting order).
type blockParts struct {
	slots, tfs      []byte
	escLens, escTfs []byte
}

// tf is posting i's term frequency.
func (b *blockParts) tf(i int) uint32 {
	if t := b.tfs[i]; t != tfEscape {
		return uint32(t)
	}
	return le.Uint32(b.escTfs[4*bytes.Count(b.tfs[:i], tfSep):])
}

// escapedLen is the row length of posting i, whose slot is normEscape: the
// r-th escaped length, r being the number of escaped slots before i.
func (b *blockParts) escapedLen(i int) uint32 {
	return le.Uint32(b.escLens[4*bytes.Count(b.slots[:i], escSep):])
}

// decodePostings decodes the rows of block p of n postings (see FORMAT)
// into docs and returns the block's other parts, checked to fit it exactly.
// Slot and tf values are not checked here (a hostile value gives a wrong
// score, never a panic; the term checksum, verified on a term's first use,
// and Check catch them). off is the file offset of p, for messages;
// errors wrap ErrCorrupt.
func decodePostings(p []byte, n int, prev, last int32, numDocs int, docs *[BlockSize]int32, off int64) (blockParts, error) {
	if 2*n > len(p) || n > BlockSize {
		return blockParts{}, corrupt("postings at offset %d: block of %d postings has %d bytes, fewer than its norm slots and tf bytes", off, n, len(p))
	}
	b := blockParts{slots: p[:n:n], tfs: p[n : 2*n : 2*n]}
	e, g := bytes.Count(b.slots, escSep), bytes.Count(b.tfs, tfSep)
	gapEnd := len(p) - 4*(e+g)
	if gapEnd < 2*n {
		return blockParts{}, corrupt("postings at offset %d: block of %d bytes has %d escaped norm slots and %d escaped tfs, too many", off, len(p), e, g)
	}
	gaps := p[2*n : gapEnd]
	end, ok := decodeFast(gaps, n, prev, last, numDocs, docs)
	if !ok {
		var err error
		if end, err = decodeBlock(gaps, n, prev, last, numDocs, docs[:], off+int64(2*n)); err != nil {
			return blockParts{}, err
		}
	}
	if end != len(gaps) {
		return blockParts{}, corrupt("postings at offset %d: block of %d postings: its row gaps end after %d of their %d bytes", off, n, end, len(gaps))
	}
	b.escLens, b.escTfs = p[gapEnd:gapEnd+4*e], p[gapEnd+4*e:]
	return b, nil
}

// decodeBlock decodes the n row gaps (uvarints) at the start of p into
// docs and returns their byte length: rows strictly increasing after prev,
// the last one equal to last, all below numDocs. off is the file offset of
// p, for messages.
func decodeBlock(p []byte, n int, prev, last int32, numDocs int, docs []int32, off int64) (int, error) {
	pos := 0
	row := int64(prev)
	for i := 0; i < n; i++ {
		gap, k := binary.Uvarint(p[pos:])
		if k <= 0 {
			return 0, corrupt("postings at offset %d: bad row varint", off+int64(pos))
		}
		pos += k
		if gap >= uint64(numDocs) || row+1+int64(gap) >= int64(numDocs) {
			return 0, corrupt("postings at offset %d: row beyond %d documents", off+int64(pos), numDocs)
		}
		row += 1 + int64(gap)
		docs[i] = int32(row)
	}
	if row != int64(last) {
		return 0, corrupt("postings at offset %d: block ends at row %d, its skip entry says %d", off, row, last)
	}
	return pos, nil
}

// Check checks the whole file: every checksum (dictionary chunks, each
// term's postings and skip entries) and every structural invariant (terms
// strictly increasing, sections exactly covered, rows increasing and in
// range, 1 <= tf <= document length, df and the tf sum matching the header,
// block and term bounds equal to the true maxima). It reads every byte of
// the file, on runtime.GOMAXPROCS(0) goroutines. It returns nil or an error
// wrapping ErrCorrupt naming the first bad section and offset found. Check
// is safe for concurrent use with searches.
func (ix *Index) Check() error {
	T := ix.numTerms
	// Dictionary: chunks, contiguity, order.
	for c := 0; c < (T+chunkTerms-1)/chunkTerms; c++ {
		if err := ix.verifyChunk(c); err != nil {
			return err
		}
	}
	var blobOff, postOff, skipIdx uint64
	var prev []byte
	for t := 0; t < T; t++ {
		e := ix.entry(t)
		eoff := ix.offEntry + int64(entrySize*t)
		if e.blobOff != blobOff || e.postOff != postOff || e.skipIdx != skipIdx {
			return corrupt("term entries at offset %d: term %d starts at term byte %d, postings byte %d, block %d; want %d, %d, %d", eoff, t, e.blobOff, e.postOff, e.skipIdx, blobOff, postOff, skipIdx)
		}
		if le.Uint16(ix.entries[entrySize*t+38:]) != 0 {
			return corrupt("term entries at offset %d: reserved field is not zero", eoff+38)
		}
		term, err := ix.termBytes(t)
		if err != nil {
			return err
		}
		if len(term) == 0 || (t > 0 && string(prev) >= string(term)) {
			return corrupt("term bytes at offset %d: term %d %q is not after %q", ix.offBlob+int64(e.blobOff), t, term, prev)
		}
		prev = term
		_, skips, _, err := ix.postingsOf(t)
		if err != nil {
			return err
		}
		if ix.gdf != nil {
			if g := le.Uint32(ix.gdf[4*t:]); g < e.df || g > ix.g.docCount {
				return corrupt("global dfs at offset %d: term %d has corpus-wide df %d, below its df %d here or above the corpus's %d documents", ix.offGDF+int64(4*t), t, g, e.df, ix.g.docCount)
			}
		}
		blobOff += uint64(e.termLen)
		skipIdx += uint64(len(skips) / skipSize)
		for i := 0; i < len(skips); i += skipSize {
			postOff += uint64(le.Uint32(skips[i+8:]))
		}
	}
	if blobOff != uint64(len(ix.blob)) || postOff != uint64(len(ix.postings)) || skipIdx != ix.numBlocks {
		return corrupt("term entries at offset %d: terms cover %d term bytes, %d postings bytes, %d blocks; sections hold %d, %d, %d", ix.offEntry, blobOff, postOff, skipIdx, len(ix.blob), len(ix.postings), ix.numBlocks)
	}
	// Postings, in parallel over term ranges.
	workers := max(1, min(runtime.GOMAXPROCS(0), T))
	errs := make([]error, workers)
	sums := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[w], errs[w] = ix.verifyTerms(T*w/workers, T*(w+1)/workers)
		}()
	}
	wg.Wait()
	var total uint64
	for w := range workers {
		if errs[w] != nil {
			return errs[w]
		}
		total += sums[w]
	}
	if total != ix.sumTF {
		return corrupt("postings at offset %d: tf sum %d, header says %d terms", ix.offPost, total, ix.sumTF)
	}
	return nil
}

// verifyTerms decodes every block of terms [lo, hi) and returns their tf sum.
func (ix *Index) verifyTerms(lo, hi int) (uint64, error) {
	var docs [BlockSize]int32
	var total uint64
	for t := lo; t < hi; t++ {
		e, skips, post, err := ix.postingsOf(t)
		if err != nil {
			return 0, err
		}
		prev := int32(-1)
		left := int(e.df)
		pos := uint64(0)
		termMax := float32(0)
		for i := 0; i < len(skips); i += skipSize {
			last := int32(le.Uint32(skips[i:]))
			bmax := math.Float32frombits(le.Uint32(skips[i+4:]))
			n := uint64(le.Uint32(skips[i+8:]))
			soff := ix.offSkip + int64(skipSize*e.skipIdx) + int64(i)
			if n > uint64(len(post))-pos {
				return 0, corrupt("skip entries at offset %d: block of %d bytes past the postings", soff, n)
			}
			cnt := min(left, BlockSize)
			boff := ix.offPost + int64(e.postOff+pos)
			bp, err := decodePostings(post[pos:pos+n], cnt, prev, last, ix.numDocs, &docs, boff)
			if err != nil {
				return 0, fmt.Errorf("term %d: %w", t, err)
			}
			m := float32(0)
			for j := 0; j < cnt; j++ {
				dl := le.Uint32(ix.docLens[4*docs[j]:])
				tf := bp.tf(j)
				if tf == 0 || (bp.tfs[j] == tfEscape && tf < tfEscape) || tf > dl {
					return 0, corrupt("postings at offset %d: term %d row %d of length %d has tf %d (tf byte %d)", boff+int64(cnt+j), t, docs[j], dl, tf, bp.tfs[j])
				}
				if want := ix.slots.slot(dl); bp.slots[j] != want {
					return 0, corrupt("postings at offset %d: term %d row %d of length %d has norm slot %d, want %d", boff+int64(j), t, docs[j], dl, bp.slots[j], want)
				}
				if bp.slots[j] == normEscape {
					if el := bp.escapedLen(j); el != dl {
						return 0, corrupt("postings at offset %d: term %d row %d of length %d has escaped length %d", boff, t, docs[j], dl, el)
					}
				}
				total += uint64(tf)
				m = max(m, tfNorm(tf, ix.normInv[docs[j]]))
			}
			if math.Float32bits(m) != math.Float32bits(bmax) {
				return 0, corrupt("skip entries at offset %d: term %d block bound %v, postings give %v", soff+4, t, bmax, m)
			}
			termMax = max(termMax, m)
			prev, left, pos = last, left-cnt, pos+n
		}
		if math.Float32bits(termMax) != math.Float32bits(e.maxX) {
			return 0, corrupt("term entries at offset %d: term %d bound %v, blocks give %v", ix.offEntry+int64(entrySize*t)+28, t, e.maxX, termMax)
		}
	}
	return total, nil
}
