package bm25

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Errors returned by Builder.
var (
	// ErrTooManyDocs: an index holds at most math.MaxInt32 rows (rows are int32).
	ErrTooManyDocs = errors.New("bm25: too many documents")
	// ErrTooLarge: a section outgrew its field in the file format (term bytes over 4 GiB).
	ErrTooLarge = errors.New("bm25: index too large for the file format")
)

// Builder accumulates documents into an in-memory inverted index and
// writes it as one file.
//
// Memory: per distinct term, the term string, a map entry and a 40-byte
// record; per posting (document, term) pair, a varint doc-id delta and a
// varint tf (usually 2 bytes); per document, 4 bytes of length. The texts
// themselves are not kept.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	k1, b   float32
	dict    map[string]int32 // term -> term id (insertion order)
	terms   []buildTerm
	names   []string // term id -> term
	docLens []uint32
	sumTF   uint64
	touched []int32 // term ids seen in the current document
	an      analyzer
}

type buildTerm struct {
	post    []byte // (uvarint doc delta, uvarint tf)*
	lastDoc int32  // last document written to post, -1 for none
	curDoc  int32  // document curTF counts for
	curTF   uint32
	df      uint32
}

// NewBuilder returns an empty Builder, or an error wrapping ErrConfig when
// cfg is invalid.
func NewBuilder(cfg Config) (*Builder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k1, b := cfg.params()
	return &Builder{k1: k1, b: b, dict: make(map[string]int32)}, nil
}

// NumDocs is the number of documents added so far.
func (bd *Builder) NumDocs() int { return len(bd.docLens) }

// Add analyzes text with Analyze and appends it as the next row: the first
// call returns row 0, the next row 1, and so on. A text with no term (empty,
// punctuation, stop words only) still takes a row and is never matched.
// It returns ErrTooManyDocs after math.MaxInt32 rows.
func (bd *Builder) Add(text string) (row int32, err error) {
	if len(bd.docLens) >= math.MaxInt32 {
		return -1, ErrTooManyDocs
	}
	doc := int32(len(bd.docLens))
	var dl uint64
	bd.touched = bd.touched[:0]
	bd.an.run(text, func(term []byte) {
		dl++
		id, ok := bd.dict[string(term)]
		if !ok {
			id = int32(len(bd.terms))
			name := string(term)
			bd.dict[name] = id
			bd.names = append(bd.names, name)
			bd.terms = append(bd.terms, buildTerm{lastDoc: -1, curDoc: -1})
		}
		t := &bd.terms[id]
		if t.curDoc != doc {
			t.curDoc = doc
			t.curTF = 0
			bd.touched = append(bd.touched, id)
		}
		t.curTF++
	})
	if dl > math.MaxUint32 {
		return -1, fmt.Errorf("bm25: document %d has %d terms, more than 2^32-1", doc, dl)
	}
	for _, id := range bd.touched {
		t := &bd.terms[id]
		t.post = binary.AppendUvarint(t.post, uint64(doc-t.lastDoc-1)) // gap-1 so the first doc 0 codes as 0
		t.post = binary.AppendUvarint(t.post, uint64(t.curTF))
		t.lastDoc = doc
		t.df++
	}
	bd.docLens = append(bd.docLens, uint32(dl))
	bd.sumTF += dl
	return doc, nil
}

// WriteFile writes the index to path in the format described in the package
// documentation. It writes to a temporary file in the same directory, syncs
// it and renames it over path, so readers see either the old file or the
// complete new one. The Builder stays usable (more Adds, another WriteFile).
func (bd *Builder) WriteFile(path string) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = bd.writeTo(f); err != nil {
		return fmt.Errorf("bm25: write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("bm25: sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("bm25: close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("bm25: rename %s: %w", tmp, err)
	}
	if d, derr := os.Open(dir); derr == nil { // make the rename durable; best effort
		d.Sync()
		d.Close()
	}
	return nil
}

// writeTo streams the index file to w.
func (bd *Builder) writeTo(w io.Writer) error {
	order := make([]int32, len(bd.terms))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(bd.names[x], bd.names[y]) })

	var blobLen, postLen uint64
	for _, id := range order {
		blobLen += uint64(len(bd.names[id]))
		postLen += uint64(len(bd.terms[id].post))
	}
	if blobLen > math.MaxUint32 {
		return fmt.Errorf("%w: %d bytes of terms", ErrTooLarge, blobLen)
	}
	docCount := uint32(0)
	for _, dl := range bd.docLens {
		if dl > 0 {
			docCount++
		}
	}

	crc := crc32.New(castagnoli)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	var hdr [headerSize]byte
	copy(hdr[0:8], magic)
	le.PutUint32(hdr[8:], formatVersion)
	le.PutUint32(hdr[12:], 0) // flags
	le.PutUint32(hdr[16:], math.Float32bits(bd.k1))
	le.PutUint32(hdr[20:], math.Float32bits(bd.b))
	le.PutUint32(hdr[24:], uint32(len(bd.docLens)))
	le.PutUint32(hdr[28:], uint32(len(bd.terms)))
	le.PutUint32(hdr[32:], docCount)
	le.PutUint32(hdr[36:], 0) // reserved
	le.PutUint64(hdr[40:], bd.sumTF)
	le.PutUint64(hdr[48:], postLen)
	le.PutUint64(hdr[56:], blobLen)
	bw.Write(hdr[:])

	var b8 [8]byte
	put32 := func(v uint32) { le.PutUint32(b8[:4], v); bw.Write(b8[:4]) }
	put64 := func(v uint64) { le.PutUint64(b8[:], v); bw.Write(b8[:]) }
	for _, dl := range bd.docLens {
		put32(dl)
	}
	off := uint64(0)
	for _, id := range order {
		put32(uint32(off))
		off += uint64(len(bd.names[id]))
	}
	put32(uint32(off))
	for _, id := range order {
		put32(bd.terms[id].df)
	}
	off = 0
	for _, id := range order {
		put64(off)
		off += uint64(len(bd.terms[id].post))
	}
	put64(off)
	for _, id := range order {
		bw.WriteString(bd.names[id])
	}
	for _, id := range order {
		bw.Write(bd.terms[id].post)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	le.PutUint32(b8[:4], crc.Sum32())
	_, err := w.Write(b8[:4])
	return err
}
