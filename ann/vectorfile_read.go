package ann

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/klauspost/compress/zstd"
)

// VectorFileReader streams a version 2 shard block by block, verifying every
// checksum, so that a file larger than memory can be scored or uploaded
// piecewise. It is not safe for concurrent use.
type VectorFileReader struct {
	path  string
	f     *os.File // nil when embedded in another file
	r     *bufio.Reader
	h     Header
	off   int64 // file offset of the next unread byte
	size  int64 // file size, bounding what a block may claim
	row   int   // rows delivered so far
	block int   // index of the next block
	dec   *zstd.Decoder
	raw   []byte
	buf   []byte
	f32   []float32
	ids   []int64
	eof   bool
	// embedded: the shard is a section of a larger file (an HNSW file);
	// bytes after its end record belong to the next section.
	embedded bool
}

// OpenVectorFileReader opens path and reads its header. Version 1 files are not
// streamable (use ReadVectorFile). Errors wrap ErrCorrupt and name the offset.
func OpenVectorFileReader(path string) (*VectorFileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ann: %w", err)
	}
	sr := &VectorFileReader{path: path, f: f, r: bufio.NewReaderSize(f, 64<<10)}
	if st, err := f.Stat(); err == nil {
		sr.size = st.Size()
	}
	if err := sr.readHeader(true); err != nil {
		f.Close()
		return nil, fmt.Errorf("ann: read %s: %w", path, err)
	}
	return sr, nil
}

// Header returns the shard header (Count as written in the header).
func (sr *VectorFileReader) Header() Header { return sr.h }

// Close closes the file.
func (sr *VectorFileReader) Close() error {
	if sr.dec != nil {
		sr.dec.Close()
	}
	if sr.f == nil {
		return nil
	}
	return sr.f.Close()
}

func (sr *VectorFileReader) readFull(b []byte, what string) error {
	n, err := io.ReadFull(sr.r, b)
	if err != nil {
		return fmt.Errorf("%w: %s at offset %d: file ends after %d of %d bytes (truncated)", ErrCorrupt, what, sr.off, n, len(b))
	}
	sr.off += int64(len(b))
	return nil
}

func (sr *VectorFileReader) readHeader(checkMagic bool) error {
	le := binary.LittleEndian
	var fixed [52]byte
	if err := sr.readFull(fixed[:8], "magic"); err != nil {
		return err
	}
	if string(fixed[:8]) != shardMagic {
		at := sr.off - 8
		return fmt.Errorf("%w: bad magic %q at offset %d, want %q", ErrCorrupt, fixed[:8], at, shardMagic)
	}
	if err := sr.readFull(fixed[8:], "header"); err != nil {
		return err
	}
	if v := le.Uint32(fixed[8:]); v != shardVersion {
		return fmt.Errorf("%w: version %d at offset 8, want %d", ErrCorrupt, v, shardVersion)
	}
	h := Header{DType: DType(le.Uint32(fixed[12:])), Dim: int(le.Uint32(fixed[24:]))}
	count := le.Uint64(fixed[16:])
	flags := le.Uint32(fixed[32:])
	h.Normalized, h.Zstd, h.Shuffle, h.HasIDs = flags&flagNormed != 0, flags&flagZstd != 0, flags&flagShuffle != 0, flags&flagIDs != 0
	h.ConfigHash = le.Uint64(fixed[36:])
	h.BlockRows = int(le.Uint32(fixed[44:]))
	idLen := int(le.Uint32(fixed[48:]))
	switch {
	case !h.DType.valid():
		return fmt.Errorf("%w: unknown dtype %d at offset 12", ErrCorrupt, h.DType)
	case count > math.MaxInt32:
		return fmt.Errorf("%w: count %d at offset 16 exceeds %d", ErrCorrupt, count, math.MaxInt32)
	case h.Dim <= 0 || h.Dim > maxDim:
		return fmt.Errorf("%w: dim %d at offset 24 not in 1..%d", ErrCorrupt, h.Dim, maxDim)
	case le.Uint32(fixed[28:]) != metricIP:
		return fmt.Errorf("%w: unknown metric %d at offset 28", ErrCorrupt, le.Uint32(fixed[28:]))
	case flags>>4 != 0:
		return fmt.Errorf("%w: unknown flags %#x at offset 32", ErrCorrupt, flags)
	case h.BlockRows <= 0 || h.BlockRows > 1<<24 || int64(h.BlockRows)*int64(h.Dim)*8 > maxBlockBytes:
		return fmt.Errorf("%w: block rows %d at offset 44 not in 1..%d or blocks over %d bytes", ErrCorrupt, h.BlockRows, 1<<24, maxBlockBytes)
	case idLen > maxEncoderID:
		return fmt.Errorf("%w: encoder id length %d at offset 48 exceeds %d", ErrCorrupt, idLen, maxEncoderID)
	}
	h.Count = int(count)
	rest := make([]byte, (idLen+3)/4*4+4)
	if err := sr.readFull(rest, "encoder id"); err != nil {
		return err
	}
	h.EncoderID = string(rest[:idLen])
	crcOff := sr.off - 4
	all := append(fixed[:], rest[:len(rest)-4]...)
	if got, want := le.Uint32(rest[len(rest)-4:]), crc32.Checksum(all, castagnoli); got != want {
		return fmt.Errorf("%w: header checksum mismatch at offset %d (stored %#x, computed %#x)", ErrCorrupt, crcOff, got, want)
	}
	if h.DType == INT8 {
		q := make([]byte, 8*h.Dim+4)
		qOff := sr.off
		if err := sr.readFull(q, "int8 scale/offset"); err != nil {
			return err
		}
		if got, want := le.Uint32(q[8*h.Dim:]), crc32.Checksum(q[:8*h.Dim], castagnoli); got != want {
			return fmt.Errorf("%w: int8 scale/offset checksum mismatch at offset %d", ErrCorrupt, qOff)
		}
		h.Scale, h.Offset = make([]float32, h.Dim), make([]float32, h.Dim)
		for j := range h.Scale {
			h.Scale[j] = math.Float32frombits(le.Uint32(q[4*j:]))
			h.Offset[j] = math.Float32frombits(le.Uint32(q[4*(h.Dim+j):]))
		}
	}
	if h.Zstd {
		if err := sr.newDecoder(uint64(h.BlockRows) * uint64(h.Dim) * 8); err != nil {
			return err
		}
	}
	sr.h = h
	return nil
}

// newDecoder sets up zstd decoding of blocks of at most maxRaw bytes.
func (sr *VectorFileReader) newDecoder(maxRaw uint64) error {
	if sr.dec != nil {
		sr.dec.Close()
	}
	var err error
	sr.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(min(maxRaw, maxBlockBytes)+1<<20))
	if err != nil {
		return fmt.Errorf("ann: zstd: %w", err)
	}
	return nil
}

// readBlock reads the next framed block of rows·rowBytes raw bytes (values
// of elemSize bytes), checks its tag, row count and checksum, and returns its raw (decompressed, unshuffled) bytes, reused by
// the next call.
func (sr *VectorFileReader) readBlock(tag string, rows, rowBytes, elemSize int) ([]byte, error) {
	le := binary.LittleEndian
	start := sr.off
	var hdr [blockHdrLen]byte
	what := fmt.Sprintf("block %d header", sr.block)
	if err := sr.readFull(hdr[:], what); err != nil {
		return nil, err
	}
	if string(hdr[:4]) != tag {
		return nil, fmt.Errorf("%w: block %d at offset %d: tag %q, want %q", ErrCorrupt, sr.block, start, hdr[:4], tag)
	}
	if got := int(le.Uint32(hdr[4:])); got != rows {
		return nil, fmt.Errorf("%w: block %d at offset %d: %d rows, want %d", ErrCorrupt, sr.block, start, got, rows)
	}
	rawLen := rows * rowBytes
	stored := int(le.Uint32(hdr[8:]))
	if (!sr.h.Zstd && stored != rawLen) || stored > rawLen+rawLen/8+1<<16 {
		return nil, fmt.Errorf("%w: block %d at offset %d: stored length %d for %d raw bytes", ErrCorrupt, sr.block, start, stored, rawLen)
	}
	if sr.size > 0 && int64(stored) > sr.size-sr.off {
		return nil, fmt.Errorf("%w: block %d at offset %d: stored length %d runs past the end of the file (%d bytes; truncated?)", ErrCorrupt, sr.block, start, stored, sr.size)
	}
	sr.buf = grow(sr.buf, stored)
	if err := sr.readFull(sr.buf, fmt.Sprintf("block %d payload", sr.block)); err != nil {
		return nil, err
	}
	if got, want := le.Uint32(hdr[12:]), crc32.Update(crc32.Checksum(hdr[:12], castagnoli), castagnoli, sr.buf); got != want {
		return nil, fmt.Errorf("%w: block %d at offset %d: checksum mismatch (stored %#x, computed %#x)", ErrCorrupt, sr.block, start, got, want)
	}
	data := sr.buf
	if sr.h.Zstd {
		var err error
		if data, err = sr.dec.DecodeAll(sr.buf, sr.raw[:0]); err != nil || len(data) != rawLen {
			return nil, fmt.Errorf("%w: block %d at offset %d: zstd payload decodes to %d bytes, want %d (%v)", ErrCorrupt, sr.block, start, len(data), rawLen, err)
		}
		sr.raw = data
	}
	if sr.h.Shuffle && elemSize > 1 {
		out := make([]byte, rawLen)
		unshuffle(out, data, elemSize)
		data = out
	}
	sr.block++
	return data, nil
}

// NextRaw returns the next block of vectors in storage form: rows·Dim
// little-endian values of the shard dtype (fp32, binary16 or int8 codes),
// starting at row row0. The slice is reused by the next call. After the
// last block it reads the id table and end record and returns io.EOF.
func (sr *VectorFileReader) NextRaw() (row0 int, raw []byte, err error) {
	if sr.eof {
		return sr.row, nil, io.EOF
	}
	if sr.row == sr.h.Count {
		if err := sr.finish(); err != nil {
			return sr.row, nil, fmt.Errorf("ann: read %s: %w", sr.path, err)
		}
		return sr.row, nil, io.EOF
	}
	rows := min(sr.h.BlockRows, sr.h.Count-sr.row)
	raw, err = sr.readBlock(tagVectors, rows, sr.h.Dim*sr.h.DType.size(), sr.h.DType.size())
	if err != nil {
		return sr.row, nil, fmt.Errorf("ann: read %s: %w", sr.path, err)
	}
	row0 = sr.row
	sr.row += rows
	return row0, raw, nil
}

// Next returns the next block widened to float32 (row-major [rows, Dim],
// reused by the next call) starting at row row0, or io.EOF after the last.
func (sr *VectorFileReader) Next() (row0 int, vecs []float32, err error) {
	row0, raw, err := sr.NextRaw()
	if err != nil {
		return row0, nil, err
	}
	n := len(raw) / sr.h.DType.size()
	if cap(sr.f32) < n {
		sr.f32 = make([]float32, n)
	}
	vecs = sr.f32[:n]
	decodeRaw(vecs, raw, sr.h)
	return row0, vecs, nil
}

// IDs returns the id table once NextRaw/Next has returned io.EOF (nil when
// the shard has none).
func (sr *VectorFileReader) IDs() []int64 { return sr.ids }

func (sr *VectorFileReader) finish() error {
	le := binary.LittleEndian
	if sr.h.HasIDs {
		sr.ids = make([]int64, 0, min(sr.h.Count, 1<<20))
		for lo := 0; lo < sr.h.Count; lo += sr.h.BlockRows {
			rows := min(sr.h.BlockRows, sr.h.Count-lo)
			raw, err := sr.readBlock(tagIDs, rows, 8, 8)
			if err != nil {
				return err
			}
			for i := 0; i < rows; i++ {
				sr.ids = append(sr.ids, int64(le.Uint64(raw[8*i:])))
			}
		}
	}
	start := sr.off
	var end [16]byte
	if err := sr.readFull(end[:], "end record"); err != nil {
		return err
	}
	if string(end[:4]) != tagEnd || le.Uint32(end[12:]) != crc32.Checksum(end[:12], castagnoli) || le.Uint64(end[4:]) != uint64(sr.h.Count) {
		return fmt.Errorf("%w: bad end record at offset %d (want %q, count %d, CRC)", ErrCorrupt, start, tagEnd, sr.h.Count)
	}
	if !sr.embedded {
		if _, err := sr.r.ReadByte(); err != io.EOF {
			return fmt.Errorf("%w: trailing bytes after the end record at offset %d", ErrCorrupt, sr.off)
		}
	}
	sr.eof = true
	return nil
}

// decodeRaw widens little-endian storage values to float32.
func decodeRaw(dst []float32, raw []byte, h Header) {
	le := binary.LittleEndian
	switch h.DType {
	case FP32:
		for i := range dst {
			dst[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
	case FP16:
		for i := range dst {
			dst[i] = f16table[le.Uint16(raw[2*i:])]
		}
	case INT8:
		d := h.Dim
		for i := range dst {
			dst[i] = h.Offset[i%d] + h.Scale[i%d]*float32(int8(raw[i]))
		}
	}
}

// ReadVectorFile loads a whole shard (version 1 or 2) into memory, keeping its
// storage dtype (fp16 stays 2 bytes per value, int8 1 byte), and returns it
// as a Flat index. A corrupt or truncated file is refused with an error
// wrapping ErrCorrupt that names the block and byte offset.
func ReadVectorFile(path string) (*Flat, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ann: %w", err)
	}
	var magic [8]byte
	_, err = io.ReadFull(f, magic[:])
	if err == nil && string(magic[:]) == shardMagicV1 {
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("ann: %w", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("ann: %w", err)
		}
		fl, err := readVectorFileV1(bufio.NewReaderSize(f, 64<<10), st.Size())
		if err != nil {
			return nil, fmt.Errorf("ann: read %s: %w", path, err)
		}
		return fl, nil
	}
	f.Close()
	sr, err := OpenVectorFileReader(path)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	return sr.readAll()
}

// readAll reads the remaining blocks into a Flat in storage form.
func (sr *VectorFileReader) readAll() (*Flat, error) {
	h := sr.h
	fl := &Flat{h: h, kernel: defaultKernel}
	le := binary.LittleEndian
	// Allocate the storage once when the file is large enough to hold it
	// (zstd shrinks float blocks less than 4×: a bound of 16× the file
	// size keeps a hostile header from claiming a huge allocation), so
	// that loading a 32 GB shard does not pass through append's doubling
	// (a transient peak of ~2.25× the shard).
	if values := int64(h.Count) * int64(h.Dim); sr.size > 0 && values*int64(h.DType.size()) <= 16*sr.size {
		switch h.DType {
		case FP32:
			fl.f32 = make([]float32, 0, values)
		case FP16:
			fl.f16 = make([]uint16, 0, values)
		case INT8:
			fl.i8 = make([]int8, 0, values)
		}
	}
	for {
		_, raw, err := sr.NextRaw()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch h.DType {
		case FP32:
			for i := 0; i < len(raw); i += 4 {
				fl.f32 = append(fl.f32, math.Float32frombits(le.Uint32(raw[i:])))
			}
		case FP16:
			for i := 0; i < len(raw); i += 2 {
				fl.f16 = append(fl.f16, le.Uint16(raw[i:]))
			}
		case INT8:
			for _, c := range raw {
				fl.i8 = append(fl.i8, int8(c))
			}
		}
	}
	fl.ids = sr.IDs()
	// An empty shard still needs non-nil storage of its dtype for widen.
	switch {
	case h.DType == FP32 && fl.f32 == nil:
		fl.f32 = []float32{}
	case h.DType == FP16 && fl.f16 == nil:
		fl.f16 = []uint16{}
	case h.DType == INT8 && fl.i8 == nil:
		fl.i8 = []int8{}
	}
	return fl, nil
}
