package bm25

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
)

// File format constants; the layout is documented in doc.go (FORMAT).
const (
	magic         = "RLSBM25\x00"
	formatVersion = 1
	headerSize    = 64
	trailerSize   = 4
)

var (
	le         = binary.LittleEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// ErrCorrupt is wrapped by every error Open returns for a file that is not a
// complete, intact index (bad magic, unknown version, truncated, checksum
// mismatch, inconsistent sections). The message names the section and the
// byte offset.
var ErrCorrupt = errors.New("bm25: corrupt index")

// Index is an immutable BM25 inverted index loaded by Open.
//
// An Index is safe for concurrent use by any number of goroutines: nothing
// in it changes after Open.
type Index struct {
	k1, b    float32
	numDocs  int
	numTerms int
	docCount uint32  // documents with at least one term (Lucene's docCount)
	sumTF    uint64  // total terms in the collection (Lucene's sumTotalTermFreq)
	avgdl    float32 // sumTF / docCount, as Lucene computes it
	docLens  []byte  // numDocs x uint32
	termOffs []byte  // (numTerms+1) x uint32
	dfs      []byte  // numTerms x uint32
	postOffs []byte  // (numTerms+1) x uint64
	blob     []byte  // concatenated sorted terms
	postings []byte
	normInv  []float32 // per document: 1 / (k1 * (1 - b + b*dl/avgdl))
	pool     bufPool
}

// Open reads the index file at path with one read, checks its CRC32 and
// structure, and returns an Index whose sections are slices of that buffer.
// It allocates the file size plus 4 bytes per document (the precomputed
// length norms).
//
// A truncated, corrupt or foreign file returns an error wrapping ErrCorrupt
// that names the offending section and offset; I/O failures return the
// *os.PathError wrapped.
func Open(path string) (*Index, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bm25: open index: %w", err)
	}
	ix, err := parse(data, true)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return ix, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// parse decodes and validates an index held in data. verifyCRC is false
// only in the fuzz test, so that it reaches the structural checks.
func parse(data []byte, verifyCRC bool) (*Index, error) {
	if len(data) < headerSize+trailerSize {
		return nil, corrupt("file is %d bytes, shorter than the %d-byte header and trailer", len(data), headerSize+trailerSize)
	}
	if string(data[:8]) != magic {
		return nil, corrupt("header at offset 0: bad magic %q, want %q", data[:8], magic)
	}
	if v := le.Uint32(data[8:]); v != formatVersion {
		return nil, corrupt("header at offset 8: unsupported version %d, want %d", v, formatVersion)
	}
	if f := le.Uint32(data[12:]); f != 0 {
		return nil, corrupt("header at offset 12: unknown flags %#x", f)
	}
	ix := &Index{
		k1:       math.Float32frombits(le.Uint32(data[16:])),
		b:        math.Float32frombits(le.Uint32(data[20:])),
		numDocs:  int(le.Uint32(data[24:])),
		numTerms: int(le.Uint32(data[28:])),
		docCount: le.Uint32(data[32:]),
		sumTF:    le.Uint64(data[40:]),
	}
	postLen, blobLen := le.Uint64(data[48:]), le.Uint64(data[56:])
	if k1 := ix.k1; !(k1 >= 0) || math.IsInf(float64(k1), 0) {
		return nil, corrupt("header at offset 16: k1 = %v", k1)
	}
	if b := ix.b; !(b >= 0 && b <= 1) {
		return nil, corrupt("header at offset 20: b = %v", b)
	}
	if ix.numDocs > math.MaxInt32 {
		return nil, corrupt("header at offset 24: %d documents", ix.numDocs)
	}
	if r := le.Uint32(data[36:]); r != 0 {
		return nil, corrupt("header at offset 36: reserved field is %d", r)
	}
	// Section sizes, in file order; the sum is done in uint64 with bounds so
	// that hostile lengths cannot overflow.
	const maxLen = 1 << 50
	if postLen > maxLen || blobLen > maxLen {
		return nil, corrupt("header at offset 48: section lengths %d and %d are absurd", postLen, blobLen)
	}
	sections := []struct {
		name string
		size uint64
	}{
		{"document lengths", 4 * uint64(ix.numDocs)},
		{"term offsets", 4 * (uint64(ix.numTerms) + 1)},
		{"document frequencies", 4 * uint64(ix.numTerms)},
		{"postings offsets", 8 * (uint64(ix.numTerms) + 1)},
		{"term bytes", blobLen},
		{"postings", postLen},
		{"checksum", trailerSize},
	}
	off := uint64(headerSize)
	var parts [7][]byte
	for i, s := range sections {
		if off+s.size > uint64(len(data)) {
			return nil, corrupt("truncated: section %q at offset %d needs %d bytes, file has %d bytes", s.name, off, s.size, len(data))
		}
		parts[i] = data[off : off+s.size]
		off += s.size
	}
	if off != uint64(len(data)) {
		return nil, corrupt("%d trailing bytes after the checksum at offset %d", uint64(len(data))-off, off-trailerSize)
	}
	if verifyCRC {
		want := le.Uint32(parts[6])
		if got := crc32.Checksum(data[:len(data)-trailerSize], castagnoli); got != want {
			return nil, corrupt("checksum at offset %d: CRC32-C of bytes [0, %d) is %#08x, file says %#08x", len(data)-trailerSize, len(data)-trailerSize, got, want)
		}
	}
	ix.docLens, ix.termOffs, ix.dfs, ix.postOffs, ix.blob, ix.postings = parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]
	if err := ix.check(headerSize); err != nil {
		return nil, err
	}
	ix.pool.n = ix.numDocs
	return ix, nil
}

// check validates the sections against each other and precomputes the
// length norms. base is the file offset of the document lengths.
func (ix *Index) check(base int) error {
	// Document lengths.
	var docCount uint32
	var sum uint64
	for d := 0; d < ix.numDocs; d++ {
		dl := le.Uint32(ix.docLens[4*d:])
		if dl > 0 {
			docCount++
		}
		sum += uint64(dl)
	}
	if docCount != ix.docCount || sum != ix.sumTF {
		return corrupt("document lengths at offset %d: %d non-empty documents and %d terms, header says %d and %d", base, docCount, sum, ix.docCount, ix.sumTF)
	}
	if docCount > 0 {
		// Lucene: avgFieldLength = (float) (sumTotalTermFreq / (double) docCount).
		ix.avgdl = float32(float64(ix.sumTF) / float64(docCount))
	}
	ix.normInv = make([]float32, ix.numDocs)
	for d := range ix.normInv {
		ix.normInv[d] = normInverse(ix.k1, ix.b, float32(le.Uint32(ix.docLens[4*d:])), ix.avgdl)
	}

	// Terms: offsets monotone within the blob, terms strictly increasing.
	termBase := base + len(ix.docLens)
	dfBase := termBase + len(ix.termOffs)
	postOffBase := dfBase + len(ix.dfs)
	blobBase := postOffBase + len(ix.postOffs)
	postBase := blobBase + len(ix.blob)
	if le.Uint32(ix.termOffs) != 0 || uint64(le.Uint32(ix.termOffs[4*ix.numTerms:])) != uint64(len(ix.blob)) {
		return corrupt("term offsets at offset %d: do not span the %d term bytes", termBase, len(ix.blob))
	}
	if le.Uint64(ix.postOffs) != 0 || le.Uint64(ix.postOffs[8*ix.numTerms:]) != uint64(len(ix.postings)) {
		return corrupt("postings offsets at offset %d: do not span the %d postings bytes", postOffBase, len(ix.postings))
	}
	var prev []byte
	var total uint64
	for t := 0; t < ix.numTerms; t++ {
		a, b := le.Uint32(ix.termOffs[4*t:]), le.Uint32(ix.termOffs[4*t+4:])
		if a >= b || b > uint32(len(ix.blob)) {
			return corrupt("term offsets at offset %d: term %d spans [%d, %d) of %d bytes", termBase+4*t, t, a, b, len(ix.blob))
		}
		term := ix.blob[a:b]
		if t > 0 && string(prev) >= string(term) {
			return corrupt("term bytes at offset %d: term %d %q is not after %q", blobBase+int(a), t, term, prev)
		}
		prev = term
		pa, pb := le.Uint64(ix.postOffs[8*t:]), le.Uint64(ix.postOffs[8*t+8:])
		if pa > pb || pb > uint64(len(ix.postings)) {
			return corrupt("postings offsets at offset %d: term %d spans [%d, %d) of %d bytes", postOffBase+8*t, t, pa, pb, len(ix.postings))
		}
		df := le.Uint32(ix.dfs[4*t:])
		if df == 0 || df > docCount {
			return corrupt("document frequencies at offset %d: term %d has df %d of %d documents", dfBase+4*t, t, df, docCount)
		}
		// Postings: df (doc gap, tf) pairs that exactly fill the term's bytes.
		p := ix.postings[pa:pb]
		doc := int64(-1)
		for i := uint32(0); i < df; i++ {
			gap, n := binary.Uvarint(p)
			if n <= 0 {
				return corrupt("postings at offset %d: term %d posting %d: bad doc varint", postBase+int(pb)-len(p), t, i)
			}
			p = p[n:]
			tf, n := binary.Uvarint(p)
			if n <= 0 {
				return corrupt("postings at offset %d: term %d posting %d: bad tf varint", postBase+int(pb)-len(p), t, i)
			}
			p = p[n:]
			if gap >= uint64(ix.numDocs) || doc+1+int64(gap) >= int64(ix.numDocs) {
				return corrupt("postings at offset %d: term %d posting %d: document beyond %d", postBase+int(pb)-len(p), t, i, ix.numDocs)
			}
			doc += 1 + int64(gap)
			if tf == 0 || tf > uint64(le.Uint32(ix.docLens[4*doc:])) {
				return corrupt("postings at offset %d: term %d document %d: tf %d with length %d", postBase+int(pb)-len(p), t, doc, tf, le.Uint32(ix.docLens[4*doc:]))
			}
			total += tf
		}
		if len(p) != 0 {
			return corrupt("postings at offset %d: term %d has %d bytes after its %d postings", postBase+int(pb)-len(p), t, len(p), df)
		}
	}
	if total != ix.sumTF {
		return corrupt("postings at offset %d: tf sum %d, header says %d terms", postBase, total, ix.sumTF)
	}
	return nil
}

// normInverse is Lucene 9 BM25Similarity's cached 1 / (k1 * ((1 - b) + b * dl / avgdl)),
// in float32 as Lucene computes it (there with the quantised dl).
func normInverse(k1, b, dl, avgdl float32) float32 {
	return 1 / (k1 * ((1 - b) + b*dl/avgdl))
}

// idf is Lucene 9 BM25Similarity.idf: ln(1 + (docCount - df + 0.5) / (df + 0.5)),
// computed in float64 and rounded to float32.
func idf(df, docCount uint32) float32 {
	return float32(math.Log(1 + (float64(docCount)-float64(df)+0.5)/(float64(df)+0.5)))
}

// NumDocs is the number of rows in the index (documents added, including
// those without any term).
func (ix *Index) NumDocs() int { return ix.numDocs }

// NumTerms is the number of distinct terms.
func (ix *Index) NumTerms() int { return ix.numTerms }

// AvgDocLen is the mean number of terms per non-empty document (Lucene's
// avgdl = sumTotalTermFreq / docCount); 0 for an index without terms.
func (ix *Index) AvgDocLen() float64 { return float64(ix.avgdl) }

// Params returns the BM25 parameters the index was built with.
func (ix *Index) Params() (k1, b float64) { return float64(ix.k1), float64(ix.b) }

// DocLen returns the number of terms of row (0 for a row out of range).
func (ix *Index) DocLen(row int32) int {
	if row < 0 || int(row) >= ix.numDocs {
		return 0
	}
	return int(le.Uint32(ix.docLens[4*int(row):]))
}

// lookup returns the term id of term by binary search over the sorted
// term bytes, or -1.
func (ix *Index) lookup(term string) int {
	lo, hi := 0, ix.numTerms
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		t := ix.blob[le.Uint32(ix.termOffs[4*m:]):le.Uint32(ix.termOffs[4*m+4:])]
		if string(t) < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < ix.numTerms && string(ix.blob[le.Uint32(ix.termOffs[4*lo:]):le.Uint32(ix.termOffs[4*lo+4:])]) == term {
		return lo
	}
	return -1
}
