package ann

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// rows16Magic starts a file of raw fp16 rows (WriteFP16Rows). The 32-byte
// header (FORMAT.md, "fp16 rows") is the magic, dim (uint32), 4 zero bytes,
// the row count (uint64), the CRC-32C of the rows (uint32) and the CRC-32C
// of the header's first 28 bytes (uint32); then the rows, row-major,
// little-endian IEEE 754 binary16.
const rows16Magic = "RLSF16R2"

const rows16Header = 32

// ErrStaleRows is returned (wrapped, naming the file) when an fp16 rows
// file is intact but holds other vectors than the shard it is opened
// beside (the shard was rebuilt or replaced): delete the file and it is
// written again.
var ErrStaleRows = errors.New("ann: fp16 rows file does not match the vector file")

// FP16Rows is a read-only, memory-mapped file of row-major [Len, Dim] fp16
// vectors (WriteFP16Rows): the exact re-rank store of a compressed HNSW
// (HNSW.RerankOn). Its pages are the kernel's page cache, not the Go heap:
// a re-rank touches ef rows per query (ef·Dim·2 bytes), and a machine
// short of memory reads them from disk instead of failing. Safe for
// concurrent reads; Close must not run concurrently with them.
type FP16Rows struct {
	path  string
	dim   int
	n     int
	sum   uint32 // CRC-32C of the rows, from the header
	rows  []uint16
	unmap func() error
}

// WriteFP16Rows writes row-major [n, dim] vecs rounded to fp16
// (round-to-nearest-even, x448/float16) to path atomically (temp file,
// sync, rename). Errors: ErrDim, I/O.
func WriteFP16Rows(path string, vecs []float32, dim int) error {
	if dim <= 0 || len(vecs)%dim != 0 {
		return fmt.Errorf("%w: %d values, dim %d", ErrDim, len(vecs), dim)
	}
	n := len(vecs) / dim
	return writeFP16Rows(path, n, dim, func(_ []float32, lo, hi int) []float32 { return vecs[lo*dim : hi*dim] })
}

// rows16Chunk is how many rows writeFP16Rows and fp16Sum widen at a time
// (about 1 MiB of float32).
func rows16Chunk(dim int) int { return max(1, (1<<20)/(4*dim)) }

// writeFP16Rows writes n rows produced by src (rows [lo, hi) as float32,
// possibly in dst) to path atomically.
func writeFP16Rows(path string, n, dim int, src func(dst []float32, lo, hi int) []float32) error {
	w, err := createFP16Rows(path, dim)
	if err != nil {
		return err
	}
	step := rows16Chunk(dim)
	buf := make([]float32, step*dim)
	for lo := 0; lo < n; lo += step {
		if err := w.writeRows(src(buf, lo, min(lo+step, n))); err != nil {
			w.abort()
			return err
		}
	}
	return w.commit()
}

// rowsWriter writes an fp16 rows file atomically: rows appended in order,
// the header (with the rows' CRC) written last, then the rename.
type rowsWriter struct {
	path   string
	f      *atomicfile.Writer
	bw     *bufio.Writer
	dim, n int
	sum    uint32
	u      []uint16
	b      []byte
}

func createFP16Rows(path string, dim int) (*rowsWriter, error) {
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("%w: fp16 rows of dim %d", ErrDim, dim)
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ann: create %s: %w", path, err)
	}
	w := &rowsWriter{path: path, f: f, bw: bufio.NewWriterSize(f, 1<<20), dim: dim}
	if _, err := w.bw.Write(make([]byte, rows16Header)); err != nil { // rewritten by commit
		w.abort()
		return nil, fmt.Errorf("ann: write %s: %w", path, err)
	}
	return w, nil
}

// writeRows appends row-major float32 rows (len a multiple of dim),
// rounded to fp16.
func (w *rowsWriter) writeRows(v []float32) error {
	if cap(w.u) < len(v) {
		w.u, w.b = make([]uint16, len(v)), make([]byte, 2*len(v))
	}
	raw := encodeF16Bytes(w.b, w.u, v)
	w.sum = crc32.Update(w.sum, castagnoli, raw)
	w.n += len(v) / w.dim
	if _, err := w.bw.Write(raw); err != nil {
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	return nil
}

func (w *rowsWriter) commit() error {
	err := w.bw.Flush()
	if err == nil && w.n > 1<<31-1 {
		err = fmt.Errorf("%w: %d rows", ErrDim, w.n)
	}
	if err == nil {
		_, err = w.f.WriteAt(rows16Hdr(w.n, w.dim, w.sum), 0)
	}
	if err == nil {
		err = w.f.Commit()
	}
	if err != nil {
		w.abort()
		return fmt.Errorf("ann: write %s: %w", w.path, err)
	}
	return nil
}

func (w *rowsWriter) abort() { w.f.Abort() }

// encodeF16Bytes rounds v to fp16 in u and returns their little-endian
// bytes in b.
func encodeF16Bytes(b []byte, u []uint16, v []float32) []byte {
	u = u[:len(v)]
	encodeF16(u, v)
	b = b[:2*len(v)]
	for j, x := range u {
		binary.LittleEndian.PutUint16(b[2*j:], x)
	}
	return b
}

// fp16Sum is the CRC-32C of the fp16 rows file's payload that src's n rows
// would have: what a file written from the same vectors holds in its
// header.
func fp16Sum(n, dim int, src func(dst []float32, lo, hi int) []float32) uint32 {
	step := rows16Chunk(dim)
	buf := make([]float32, step*dim)
	u := make([]uint16, step*dim)
	b := make([]byte, 2*step*dim)
	var sum uint32
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		sum = crc32.Update(sum, castagnoli, encodeF16Bytes(b, u, src(buf, lo, hi)))
	}
	return sum
}

func rows16Hdr(n, dim int, sum uint32) []byte {
	le := binary.LittleEndian
	h := make([]byte, rows16Header)
	copy(h, rows16Magic)
	le.PutUint32(h[8:], uint32(dim))
	le.PutUint64(h[16:], uint64(n))
	le.PutUint32(h[24:], sum)
	le.PutUint32(h[28:], crc32.Checksum(h[:28], castagnoli))
	return h
}

// parseRows16Header checks a header against the file size and returns the
// shape and the rows' CRC. Errors wrap ErrCorrupt and say what is wrong.
func parseRows16Header(hdr []byte, size int64) (n, dim int, sum uint32, err error) {
	le := binary.LittleEndian
	if len(hdr) < rows16Header {
		return 0, 0, 0, fmt.Errorf("%w: %d bytes, shorter than the %d-byte fp16 rows header", ErrCorrupt, len(hdr), rows16Header)
	}
	if string(hdr[:8]) != rows16Magic {
		return 0, 0, 0, fmt.Errorf("%w: bad magic %q, want %q", ErrCorrupt, hdr[:8], rows16Magic)
	}
	if got, want := le.Uint32(hdr[28:]), crc32.Checksum(hdr[:28], castagnoli); got != want {
		return 0, 0, 0, fmt.Errorf("%w: header checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	d, n64 := le.Uint32(hdr[8:]), le.Uint64(hdr[16:])
	if le.Uint32(hdr[12:]) != 0 || d == 0 || d > maxDim || n64 > 1<<31-1 {
		return 0, 0, 0, fmt.Errorf("%w: header says %d rows × %d dims (reserved %#x): out of range", ErrCorrupt, n64, d, le.Uint32(hdr[12:]))
	}
	if want := rows16Header + 2*int64(n64)*int64(d); size != want {
		return 0, 0, 0, fmt.Errorf("%w: %d rows × %d dims need %d bytes, the file has %d (truncated or extended)", ErrCorrupt, n64, d, want, size)
	}
	return int(n64), int(d), le.Uint32(hdr[24:]), nil
}

// OpenFP16Rows maps a file written by WriteFP16Rows. It checks the
// header (magic, checksum, shape against the file size) but not the rows:
// Check reads them. Errors wrap ErrCorrupt and name the path.
func OpenFP16Rows(path string) (*FP16Rows, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ann: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("ann: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("ann: fp16 rows %s: not a regular file (%v)", path, st.Mode().Type())
	}
	var hdr [rows16Header]byte
	k, _ := io.ReadFull(f, hdr[:])
	n, dim, sum, err := parseRows16Header(hdr[:k], st.Size())
	if err != nil {
		return nil, fmt.Errorf("ann: fp16 rows %s: %w", path, err)
	}
	r := &FP16Rows{path: path, dim: dim, n: n, sum: sum}
	if n == 0 {
		return r, nil
	}
	if r.rows, r.unmap, err = mapU16(f, st.Size()); err != nil {
		return nil, fmt.Errorf("ann: map %s: %w", path, err)
	}
	r.rows = r.rows[rows16Header/2:]
	return r, nil
}

// Check reads every row and compares their CRC-32C with the header's
// (one pass over the file; it pages the rows in). Errors wrap ErrCorrupt
// and name the path.
func (r *FP16Rows) Check() error {
	step := rows16Chunk(r.dim) * r.dim
	b := make([]byte, 2*step)
	var sum uint32
	for lo := 0; lo < len(r.rows); lo += step {
		src := r.rows[lo:min(lo+step, len(r.rows))]
		for j, x := range src {
			binary.LittleEndian.PutUint16(b[2*j:], x)
		}
		sum = crc32.Update(sum, castagnoli, b[:2*len(src)])
	}
	if sum != r.sum {
		return fmt.Errorf("%w: fp16 rows %s: rows checksum %08x, header says %08x (damaged file: delete it to rewrite it)", ErrCorrupt, r.path, sum, r.sum)
	}
	return nil
}

// Path is the mapped file.
func (r *FP16Rows) Path() string { return r.path }

// Len is the number of rows; Dim their dimension.
func (r *FP16Rows) Len() int { return r.n }

// Dim is the row dimension.
func (r *FP16Rows) Dim() int { return r.dim }

// Close unmaps the file.
func (r *FP16Rows) Close() error {
	if r.unmap == nil {
		return nil
	}
	err := r.unmap()
	r.unmap, r.rows = nil, nil
	return err
}

// row widens row i into dst[:Dim] and returns it. The file is
// little-endian; so is every platform the mapping is used on (amd64,
// arm64), checked by mapU16.
func (r *FP16Rows) row(i int, dst []float32) []float32 {
	src := r.rows[i*r.dim : (i+1)*r.dim]
	dst = dst[:r.dim]
	for j, b := range src {
		dst[j] = f16table[b]
	}
	return dst
}

// flat is an exact flat index over the mapped rows (fp16 storage, h's
// encoder fields and ids): what ann.Open serves as Opened.Flat for a
// compressed graph, so that the shard's own storage can be released. It
// reads the mapping: r must stay open while it is used.
func (r *FP16Rows) flat(h Header, ids []int64) *Flat {
	fh := Header{DType: FP16, Count: r.n, Dim: r.dim, Normalized: h.Normalized, EncoderID: h.EncoderID, ConfigHash: h.ConfigHash, HasIDs: ids != nil}
	rows := r.rows
	if rows == nil {
		rows = []uint16{}
	}
	return &Flat{h: fh, f16: rows, ids: ids, kernel: defaultKernel}
}

func crcUpdate(sum uint32, b []byte) uint32 { return crc32.Update(sum, castagnoli, b) }
