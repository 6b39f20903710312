package ann

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"

	"github.com/klauspost/compress/zstd"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// DType is the storage type of shard vectors.
type DType uint32

const (
	// FP32 stores IEEE 754 float32 values (4 bytes each).
	FP32 DType = 1
	// FP16 stores IEEE 754 binary16 values (2 bytes each); the default.
	FP16 DType = 2
	// INT8 stores one signed byte per value, decoded as offset_j + scale_j·c
	// with per-dimension float32 scale and offset (FitInt8).
	INT8 DType = 3
)

func (d DType) String() string {
	switch d {
	case FP32:
		return "fp32"
	case FP16:
		return "fp16"
	case INT8:
		return "int8"
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

// ParseDType parses "fp16" (also ""), "fp32" or "int8".
func ParseDType(s string) (DType, error) {
	switch s {
	case "fp16", "":
		return FP16, nil
	case "fp32":
		return FP32, nil
	case "int8":
		return INT8, nil
	}
	return 0, fmt.Errorf("ann: unknown dtype %q (want fp16, fp32 or int8)", s)
}

func (d DType) size() int {
	switch d {
	case FP16:
		return 2
	case INT8:
		return 1
	}
	return 4
}

func (d DType) valid() bool { return d == FP32 || d == FP16 || d == INT8 }

const (
	shardMagic   = "RLSVEC02"
	shardVersion = 2
	metricIP     = 1

	flagNormed  = 1 << 0
	flagZstd    = 1 << 1
	flagShuffle = 1 << 2
	flagIDs     = 1 << 3

	// DefaultBlockRows is the rows per block when Header.BlockRows is 0:
	// 4096 rows of 768-d fp16 are 6 MiB, large enough for zstd to find
	// the repeated exponent bytes, small enough to stream.
	DefaultBlockRows = 4096

	maxDim = 1 << 16 // largest accepted dimension
	// maxBlockBytes caps one block's raw bytes (BlockRows·Dim·8, the id
	// table's width) so that a reader never allocates more than this for a
	// block a header claims: 1 GiB.
	maxBlockBytes = 1 << 30
	maxEncoderID  = 4096 // longest accepted encoder id, bytes
	blockHdrLen   = 16
)

var (
	// ErrCorrupt is returned (wrapped, naming the block and byte offset) for
	// a shard file that fails a structural or checksum check, or ends early.
	ErrCorrupt = errors.New("ann: corrupt vector file")
	// ErrDim is returned when vector lengths do not match the dimension.
	ErrDim = errors.New("ann: dimension mismatch")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header describes a shard (FORMAT.md). For writing, Count is ignored (it
// is the number of rows appended) and the zero values mean: BlockRows
// DefaultBlockRows, no compression, no shuffle.
type Header struct {
	DType      DType
	Count      int // number of vectors
	Dim        int
	Normalized bool   // vectors are L2-normalised
	EncoderID  string // model name
	ConfigHash uint64 // FNV-1a 64 of the encoder's rlsearch.json, 0 = unknown

	BlockRows int  // rows per block (the last block may be shorter)
	Zstd      bool // each block is a zstd frame (klauspost/compress, default level)
	Shuffle   bool // values are byte-shuffled within a block before compression
	HasIDs    bool // an id table (int64 per row) follows the vector blocks

	// Scale and Offset ([Dim] each) decode INT8 codes: v_j = Offset_j +
	// Scale_j·c. Required for INT8 (see FitInt8), ignored otherwise.
	Scale, Offset []float32
}

// Validate reports the first bad field of a header meant for writing.
func (h Header) Validate() error {
	switch {
	case !h.DType.valid():
		return fmt.Errorf("ann: Header.DType: unsupported dtype %v", h.DType)
	case h.Dim <= 0 || h.Dim > maxDim:
		return fmt.Errorf("ann: Header.Dim: %d must be in 1..%d", h.Dim, maxDim)
	case h.BlockRows < 0 || h.BlockRows > 1<<24 || int64(max(h.BlockRows, DefaultBlockRows))*int64(h.Dim)*8 > maxBlockBytes:
		return fmt.Errorf("ann: Header.BlockRows: %d must be in 0..%d with BlockRows·Dim·8 ≤ %d", h.BlockRows, 1<<24, maxBlockBytes)
	case len(h.EncoderID) > maxEncoderID:
		return fmt.Errorf("ann: Header.EncoderID: %d bytes, at most %d", len(h.EncoderID), maxEncoderID)
	case h.DType == INT8 && (len(h.Scale) != h.Dim || len(h.Offset) != h.Dim):
		return fmt.Errorf("ann: Header.Scale/Offset: int8 needs %d of each (see FitInt8), have %d and %d", h.Dim, len(h.Scale), len(h.Offset))
	}
	return nil
}

func (h Header) flags() uint32 {
	var f uint32
	if h.Normalized {
		f |= flagNormed
	}
	if h.Zstd {
		f |= flagZstd
	}
	if h.Shuffle {
		f |= flagShuffle
	}
	if h.HasIDs {
		f |= flagIDs
	}
	return f
}

// encodeHeader lays out the header, its CRC and, for INT8, the quantisation
// section (FORMAT.md).
func encodeHeader(h Header) []byte {
	le := binary.LittleEndian
	b := []byte(shardMagic)
	b = le.AppendUint32(b, shardVersion)
	b = le.AppendUint32(b, uint32(h.DType))
	b = le.AppendUint64(b, uint64(h.Count))
	b = le.AppendUint32(b, uint32(h.Dim))
	b = le.AppendUint32(b, metricIP)
	b = le.AppendUint32(b, h.flags())
	b = le.AppendUint64(b, h.ConfigHash)
	b = le.AppendUint32(b, uint32(h.BlockRows))
	b = le.AppendUint32(b, uint32(len(h.EncoderID)))
	b = append(b, h.EncoderID...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = le.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if h.DType == INT8 {
		q := len(b)
		for _, v := range h.Scale {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
		for _, v := range h.Offset {
			b = le.AppendUint32(b, math.Float32bits(v))
		}
		b = le.AppendUint32(b, crc32.Checksum(b[q:], castagnoli))
	}
	return b
}

// Block tags (FORMAT.md).
const (
	tagVectors = "VBLK"
	tagIDs     = "IBLK"
	tagEnd     = "VEND"
)

// shuffle transposes n values of size s: out[b*n+i] = in[i*s+b].
func shuffle(dst, src []byte, s int) {
	n := len(src) / s
	for i := 0; i < n; i++ {
		for b := 0; b < s; b++ {
			dst[b*n+i] = src[i*s+b]
		}
	}
}

func unshuffle(dst, src []byte, s int) {
	n := len(src) / s
	for i := 0; i < n; i++ {
		for b := 0; b < s; b++ {
			dst[i*s+b] = src[b*n+i]
		}
	}
}

// VectorFileWriter streams vectors into a shard file, block by block. It is not
// safe for concurrent use.
type VectorFileWriter struct {
	path    string
	f       *atomicfile.Writer // nil when embedded
	bw      *bufio.Writer
	h       Header
	enc     *zstd.Encoder
	pending []byte // raw values of the block being filled
	ids     []int64
	scratch []byte
	row16   []uint16 // one row of binary16 while appending
	row8    []int8   // one row of int8 codes while appending
	blocks  int
	off     int64
	done    bool
	err     error
	// embedded writers write a section of a larger file into bw: the
	// header carries the expected Count up front and Close writes no file.
	embedded bool
	expect   int
}

// newSectionWriter starts a shard section of exactly h.Count rows inside
// another file (an HNSW file) written through bw.
func newSectionWriter(bw *bufio.Writer, h Header) (*VectorFileWriter, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if h.BlockRows == 0 {
		h.BlockRows = DefaultBlockRows
	}
	w := &VectorFileWriter{path: "section", bw: bw, h: h, embedded: true, expect: h.Count}
	if h.Zstd {
		var err error
		if w.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)); err != nil {
			return nil, fmt.Errorf("ann: zstd: %w", err)
		}
	}
	if _, err := bw.Write(encodeHeader(h)); err != nil {
		return nil, err
	}
	w.h.Count = 0
	return w, nil
}

// CreateVectorFile starts writing a shard at path atomically: rows go to a
// temporary file in the same directory, synced and renamed over path by
// Close. h.Count is ignored. Errors: h.Validate(), file creation errors.
func CreateVectorFile(path string, h Header) (*VectorFileWriter, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if h.BlockRows == 0 {
		h.BlockRows = DefaultBlockRows
	}
	h.Count = 0
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ann: create %s: %w", path, err)
	}
	w := &VectorFileWriter{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20), h: h}
	if h.Zstd {
		if w.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1)); err != nil {
			w.Abort()
			return nil, fmt.Errorf("ann: zstd: %w", err)
		}
	}
	hb := encodeHeader(w.h)
	if _, err := w.bw.Write(hb); err != nil {
		w.Abort()
		return nil, fmt.Errorf("ann: write %s: %w", path, err)
	}
	w.off = int64(len(hb))
	return w, nil
}

// Append adds rows: vecs is row-major [n, Dim] float32, converted to the
// shard dtype (INT8 codes are clamped to [-128, 127]).
func (w *VectorFileWriter) Append(vecs []float32) error {
	return w.AppendWithIDs(vecs, nil)
}

// AppendWithIDs adds rows with their external ids (ids is [n]). A shard
// has ids for all rows or for none: the first Append decides.
func (w *VectorFileWriter) AppendWithIDs(vecs []float32, ids []int64) error {
	if w.done || w.err != nil {
		return errors.New("ann: append to a closed or failed vector file writer")
	}
	d := w.h.Dim
	if len(vecs)%d != 0 {
		return fmt.Errorf("%w: %d values is not a multiple of dim %d", ErrDim, len(vecs), d)
	}
	n := len(vecs) / d
	if n == 0 {
		return nil
	}
	if w.h.Count == 0 && ids != nil {
		w.h.HasIDs = true
	}
	if w.h.HasIDs != (ids != nil) || (ids != nil && len(ids) != n) {
		return fmt.Errorf("%w: ann: ids for all rows or none: %d ids for %d rows (vector file has ids: %v)", ErrDim, len(ids), n, w.h.HasIDs)
	}
	w.ids = append(w.ids, ids...)
	rowBytes := d * w.h.DType.size()
	for r := 0; r < n; r++ {
		row := vecs[r*d : (r+1)*d]
		switch w.h.DType {
		case FP32:
			for _, v := range row {
				w.pending = binary.LittleEndian.AppendUint32(w.pending, math.Float32bits(v))
			}
		case FP16:
			if len(w.row16) != d {
				w.row16 = make([]uint16, d)
			}
			encodeF16(w.row16, row)
			for _, u := range w.row16 {
				w.pending = binary.LittleEndian.AppendUint16(w.pending, u)
			}
		case INT8:
			if len(w.row8) != d {
				w.row8 = make([]int8, d)
			}
			encodeI8(w.row8, row, w.h.Scale, w.h.Offset)
			for _, c := range w.row8 {
				w.pending = append(w.pending, byte(c))
			}
		}
		w.h.Count++
		if len(w.pending) == w.h.BlockRows*rowBytes {
			if err := w.flushBlock(tagVectors, w.pending, w.h.BlockRows, w.h.DType.size()); err != nil {
				return err
			}
			w.pending = w.pending[:0]
		}
	}
	return nil
}

// flushBlock writes one framed block of raw values of elemSize bytes.
func (w *VectorFileWriter) flushBlock(tag string, raw []byte, rows, elemSize int) error {
	stored := raw
	if w.h.Shuffle && elemSize > 1 {
		w.scratch = grow(w.scratch, len(raw))
		shuffle(w.scratch, raw, elemSize)
		stored = w.scratch
	}
	if w.h.Zstd {
		stored = w.enc.EncodeAll(stored, nil)
	}
	hdr := make([]byte, 0, blockHdrLen)
	hdr = append(hdr, tag...)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(rows))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(len(stored)))
	c := crc32.Update(crc32.Checksum(hdr, castagnoli), castagnoli, stored)
	hdr = binary.LittleEndian.AppendUint32(hdr, c)
	if _, err := w.bw.Write(hdr); err != nil {
		w.err = err
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	if _, err := w.bw.Write(stored); err != nil {
		w.err = err
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	w.off += int64(len(hdr) + len(stored))
	w.blocks++
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// Close writes the last block, the id table and the end record, rewrites
// the header with the final count, syncs and renames the file into place.
// On error the temporary file is removed.
func (w *VectorFileWriter) Close() error {
	if w.done {
		return errors.New("ann: vector file writer already closed")
	}
	if w.err != nil {
		w.Abort()
		return fmt.Errorf("ann: write %s: %w", w.path, w.err)
	}
	err := func() error {
		size := w.h.DType.size()
		if len(w.pending) > 0 {
			if err := w.flushBlock(tagVectors, w.pending, len(w.pending)/(w.h.Dim*size), size); err != nil {
				return err
			}
		}
		if w.h.HasIDs {
			for lo := 0; lo < len(w.ids); lo += w.h.BlockRows {
				hi := min(lo+w.h.BlockRows, len(w.ids))
				raw := make([]byte, 0, 8*(hi-lo))
				for _, id := range w.ids[lo:hi] {
					raw = binary.LittleEndian.AppendUint64(raw, uint64(id))
				}
				if err := w.flushBlock(tagIDs, raw, hi-lo, 8); err != nil {
					return err
				}
			}
		}
		end := []byte(tagEnd)
		end = binary.LittleEndian.AppendUint64(end, uint64(w.h.Count))
		end = binary.LittleEndian.AppendUint32(end, crc32.Checksum(end, castagnoli))
		if _, err := w.bw.Write(end); err != nil {
			return err
		}
		if w.embedded {
			if w.h.Count != w.expect {
				return fmt.Errorf("ann: section has %d rows, header says %d", w.h.Count, w.expect)
			}
			return nil
		}
		if err := w.bw.Flush(); err != nil {
			return err
		}
		if _, err := w.f.WriteAt(encodeHeader(w.h), 0); err != nil {
			return err
		}
		return w.f.Sync()
	}()
	if err != nil {
		w.Abort()
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	w.done = true
	if w.enc != nil {
		w.enc.Close()
	}
	if w.embedded {
		return nil
	}
	if err := w.f.Commit(); err != nil {
		return fmt.Errorf("ann: %w", err)
	}
	return nil
}

// Abort removes the temporary file; the destination is left untouched.
func (w *VectorFileWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	if w.enc != nil {
		w.enc.Close()
	}
	if w.f != nil {
		w.f.Abort()
	}
}

// WriteVectorFile writes f (with its id table, if any) to path atomically with
// the given block layout options (h's DType, Dim and Scale/Offset are
// taken from f; its Zstd, Shuffle and BlockRows are used).
func WriteVectorFile(path string, f *Flat, opts Header) error {
	h := f.h
	h.Zstd, h.Shuffle, h.BlockRows = opts.Zstd, opts.Shuffle, opts.BlockRows
	h.HasIDs = false
	w, err := CreateVectorFile(path, h)
	if err != nil {
		return err
	}
	step := max(1, (1<<20)/(4*f.h.Dim))
	for lo := 0; lo < f.h.Count; lo += step {
		hi := min(lo+step, f.h.Count)
		var ids []int64
		if f.ids != nil {
			ids = f.ids[lo:hi]
		}
		if err := w.appendRaw(f, lo, hi, ids); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// appendRaw appends rows [lo, hi) of f without re-quantising them.
func (w *VectorFileWriter) appendRaw(f *Flat, lo, hi int, ids []int64) error {
	if f.i8 == nil {
		return w.AppendWithIDs(f.Vectors(lo, hi), ids)
	}
	// INT8: copy codes one row at a time so that a round trip is bit-exact.
	d := f.h.Dim
	for r := lo; r < hi; r++ {
		if w.h.Count == 0 && ids != nil {
			w.h.HasIDs = true
		}
		if ids != nil {
			w.ids = append(w.ids, ids[r-lo])
		}
		for _, c := range f.i8[r*d : (r+1)*d] {
			w.pending = append(w.pending, byte(c))
		}
		w.h.Count++
		if len(w.pending) == w.h.BlockRows*d {
			if err := w.flushBlock(tagVectors, w.pending, w.h.BlockRows, 1); err != nil {
				return err
			}
			w.pending = w.pending[:0]
		}
	}
	return nil
}
