package ann

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/x448/float16"
)

// DType is the storage type of shard vectors.
type DType uint32

const (
	// FP32 stores IEEE 754 float32 values (4 bytes each).
	FP32 DType = 1
	// FP16 stores IEEE 754 binary16 values (2 bytes each); the default.
	FP16 DType = 2
)

func (d DType) String() string {
	switch d {
	case FP32:
		return "fp32"
	case FP16:
		return "fp16"
	}
	return fmt.Sprintf("dtype(%d)", uint32(d))
}

// ParseDType parses "fp16" or "fp32".
func ParseDType(s string) (DType, error) {
	switch s {
	case "fp16", "":
		return FP16, nil
	case "fp32":
		return FP32, nil
	}
	return 0, fmt.Errorf("ann: unknown dtype %q (want fp16 or fp32)", s)
}

func (d DType) size() int {
	if d == FP16 {
		return 2
	}
	return 4
}

const (
	shardMagic   = "RLSVEC01"
	shardVersion = 1
	metricIP     = 1
	flagNormed   = 1
)

// ErrCorrupt is returned (wrapped, naming the offset) for a shard file that
// fails a structural or checksum check.
var ErrCorrupt = errors.New("ann: corrupt shard")

// ErrDim is returned when vector lengths do not match the shard dimension.
var ErrDim = errors.New("ann: dimension mismatch")

// Header describes a shard.
type Header struct {
	DType      DType
	Count      int // number of vectors
	Dim        int
	Normalized bool   // vectors are L2-normalised
	EncoderID  string // model name
	ConfigHash uint64 // FNV-1a 64 of the encoder's rlsearch.json, 0 = unknown
}

// ShardWriter streams vectors into a shard file. Not safe for concurrent use.
type ShardWriter struct {
	path string
	f    *os.File
	bw   *bufio.Writer
	crc  hash.Hash32
	h    Header
	buf  []byte
	done bool
}

// CreateShard starts writing a shard at path (atomically: a temporary file
// renamed by Close). h.Count is ignored; it is the number of rows appended.
func CreateShard(path string, h Header) (*ShardWriter, error) {
	if h.DType != FP16 && h.DType != FP32 {
		return nil, fmt.Errorf("ann: unsupported dtype %v", h.DType)
	}
	if h.Dim <= 0 {
		return nil, fmt.Errorf("ann: dim %d must be positive", h.Dim)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("ann: create %s: %w", path, err)
	}
	w := &ShardWriter{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20), crc: crc32.NewIEEE(), h: h}
	w.h.Count = 0
	if _, err := w.bw.Write(encodeHeader(w.h)); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

func encodeHeader(h Header) []byte {
	b := []byte(shardMagic)
	b = binary.LittleEndian.AppendUint32(b, shardVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(h.DType))
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Count))
	b = binary.LittleEndian.AppendUint32(b, uint32(h.Dim))
	b = binary.LittleEndian.AppendUint32(b, metricIP)
	var flags uint32
	if h.Normalized {
		flags |= flagNormed
	}
	b = binary.LittleEndian.AppendUint32(b, flags)
	b = binary.LittleEndian.AppendUint64(b, h.ConfigHash)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(h.EncoderID)))
	b = append(b, h.EncoderID...)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// Append adds rows: vecs is row-major [n, Dim] float32.
func (w *ShardWriter) Append(vecs []float32) error {
	if len(vecs)%w.h.Dim != 0 {
		return fmt.Errorf("%w: %d values is not a multiple of dim %d", ErrDim, len(vecs), w.h.Dim)
	}
	w.buf = w.buf[:0]
	for _, v := range vecs {
		if w.h.DType == FP16 {
			w.buf = binary.LittleEndian.AppendUint16(w.buf, float16.Fromfloat32(v).Bits())
		} else {
			w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(v))
		}
	}
	w.crc.Write(w.buf)
	if _, err := w.bw.Write(w.buf); err != nil {
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	w.h.Count += len(vecs) / w.h.Dim
	return nil
}

// Close finishes the file and renames it into place.
func (w *ShardWriter) Close() error {
	if w.done {
		return errors.New("ann: shard writer already closed")
	}
	trailer := binary.LittleEndian.AppendUint32(nil, w.crc.Sum32())
	trailer = append(trailer, shardMagic...)
	var count [8]byte
	binary.LittleEndian.PutUint64(count[:], uint64(w.h.Count))
	err := func() error {
		if _, err := w.bw.Write(trailer); err != nil {
			return err
		}
		if err := w.bw.Flush(); err != nil {
			return err
		}
		if _, err := w.f.WriteAt(count[:], 16); err != nil {
			return err
		}
		return w.f.Sync()
	}()
	if err != nil {
		w.Abort()
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	w.done = true
	if err := w.f.Close(); err != nil {
		os.Remove(w.f.Name())
		return err
	}
	if err := os.Rename(w.f.Name(), w.path); err != nil {
		os.Remove(w.f.Name())
		return fmt.Errorf("ann: %w", err)
	}
	return nil
}

// Abort removes the temporary file.
func (w *ShardWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
}

// ReadShard loads a whole shard into memory (fp16 stays fp16: 2 bytes per
// value) and returns it as a Flat index.
func ReadShard(path string) (*Flat, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ann: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fl, err := readShard(bufio.NewReaderSize(f, 1<<20), st.Size())
	if err != nil {
		return nil, fmt.Errorf("ann: read %s: %w", path, err)
	}
	return fl, nil
}

func readShard(r io.Reader, size int64) (*Flat, error) {
	var fixed [48]byte
	if _, err := io.ReadFull(r, fixed[:]); err != nil {
		return nil, fmt.Errorf("%w: header shorter than 48 bytes", ErrCorrupt)
	}
	le := binary.LittleEndian
	if string(fixed[:8]) != shardMagic {
		return nil, fmt.Errorf("%w: bad magic at offset 0", ErrCorrupt)
	}
	if v := le.Uint32(fixed[8:]); v != shardVersion {
		return nil, fmt.Errorf("%w: version %d at offset 8, want %d", ErrCorrupt, v, shardVersion)
	}
	h := Header{DType: DType(le.Uint32(fixed[12:])), Count: int(le.Uint64(fixed[16:])), Dim: int(le.Uint32(fixed[24:]))}
	if h.DType != FP16 && h.DType != FP32 {
		return nil, fmt.Errorf("%w: unknown dtype %d at offset 12", ErrCorrupt, h.DType)
	}
	if m := le.Uint32(fixed[28:]); m != metricIP {
		return nil, fmt.Errorf("%w: unknown metric %d at offset 28", ErrCorrupt, m)
	}
	h.Normalized = le.Uint32(fixed[32:])&flagNormed != 0
	h.ConfigHash = le.Uint64(fixed[36:])
	idLen := int64(le.Uint32(fixed[44:]))
	if idLen > 4096 {
		return nil, fmt.Errorf("%w: encoder id length %d at offset 44", ErrCorrupt, idLen)
	}
	payloadOff := (48 + idLen + 7) / 8 * 8
	if h.Dim <= 0 || h.Count < 0 {
		return nil, fmt.Errorf("%w: count %d dim %d at offset 16", ErrCorrupt, h.Count, h.Dim)
	}
	payload := int64(h.Count) * int64(h.Dim) * int64(h.DType.size())
	if want := payloadOff + payload + 12; size != want || payload/int64(h.Dim) != int64(h.Count)*int64(h.DType.size()) {
		return nil, fmt.Errorf("%w: file is %d bytes, header (count %d, dim %d, %v) implies %d (truncated?)", ErrCorrupt, size, h.Count, h.Dim, h.DType, want)
	}
	rest := make([]byte, payloadOff-48)
	if _, err := io.ReadFull(r, rest); err != nil {
		return nil, fmt.Errorf("%w: encoder id: %v", ErrCorrupt, err)
	}
	h.EncoderID = string(rest[:idLen])
	fl := &Flat{h: h}
	crc := crc32.NewIEEE()
	buf := make([]byte, 1<<20)
	n := h.Count * h.Dim
	if h.DType == FP16 {
		fl.f16 = make([]uint16, n)
	} else {
		fl.f32 = make([]float32, n)
	}
	step := len(buf) / h.DType.size()
	for i := 0; i < n; i += step {
		m := min(step, n-i)
		chunk := buf[:m*h.DType.size()]
		if _, err := io.ReadFull(r, chunk); err != nil {
			return nil, fmt.Errorf("%w: payload at offset %d: %v", ErrCorrupt, payloadOff+int64(i*h.DType.size()), err)
		}
		crc.Write(chunk)
		for j := 0; j < m; j++ {
			if h.DType == FP16 {
				fl.f16[i+j] = le.Uint16(chunk[2*j:])
			} else {
				fl.f32[i+j] = math.Float32frombits(le.Uint32(chunk[4*j:]))
			}
		}
	}
	var tr [12]byte
	if _, err := io.ReadFull(r, tr[:]); err != nil || string(tr[4:]) != shardMagic {
		return nil, fmt.Errorf("%w: bad trailer at offset %d", ErrCorrupt, payloadOff+payload)
	}
	if got := le.Uint32(tr[:]); got != crc.Sum32() {
		return nil, fmt.Errorf("%w: payload checksum mismatch (offset %d..%d)", ErrCorrupt, payloadOff, payloadOff+payload)
	}
	return fl, nil
}
