package ann

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// rows16Magic starts a file of raw fp16 rows (WriteFP16Rows); the 32-byte
// header is the magic, dim (uint32), 4 zero bytes and the row count
// (uint64), then the rows, row-major, little-endian IEEE 754 binary16.
const rows16Magic = "RLSF16R1"

const rows16Header = 32

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
	rows  []uint16
	unmap func() error
}

// WriteFP16Rows writes row-major [n, dim] vecs rounded to fp16
// (round-to-nearest-even, x448/float16) to path atomically. Errors: ErrDim,
// I/O.
func WriteFP16Rows(path string, vecs []float32, dim int) error {
	if dim <= 0 || len(vecs)%dim != 0 {
		return fmt.Errorf("%w: %d values, dim %d", ErrDim, len(vecs), dim)
	}
	return atomicfile.WriteFile(path, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var hdr [rows16Header]byte
		copy(hdr[:], rows16Magic)
		binary.LittleEndian.PutUint32(hdr[8:], uint32(dim))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(len(vecs)/dim))
		if _, err := bw.Write(hdr[:]); err != nil {
			return err
		}
		u := make([]uint16, dim)
		b := make([]byte, 2*dim)
		for lo := 0; lo < len(vecs); lo += dim {
			encodeF16(u, vecs[lo:lo+dim])
			for j, x := range u {
				binary.LittleEndian.PutUint16(b[2*j:], x)
			}
			if _, err := bw.Write(b); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// OpenFP16Rows maps a file written by WriteFP16Rows. Errors wrap
// ErrCorrupt (bad magic, size not matching the header) and name the path.
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
	var hdr [rows16Header]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return nil, fmt.Errorf("%w: %s: header: %v", ErrCorrupt, path, err)
	}
	if string(hdr[:8]) != rows16Magic {
		return nil, fmt.Errorf("%w: %s: bad magic %q, want %q", ErrCorrupt, path, hdr[:8], rows16Magic)
	}
	dim := int(binary.LittleEndian.Uint32(hdr[8:]))
	n := binary.LittleEndian.Uint64(hdr[16:])
	if dim <= 0 || dim > maxDim || n > 1<<31-1 || st.Size() != rows16Header+2*int64(n)*int64(dim) {
		return nil, fmt.Errorf("%w: %s: %d rows × %d dims do not match the file size %d", ErrCorrupt, path, n, dim, st.Size())
	}
	r := &FP16Rows{path: path, dim: dim, n: int(n)}
	if n == 0 {
		return r, nil
	}
	if r.rows, r.unmap, err = mapU16(f, st.Size()); err != nil {
		return nil, fmt.Errorf("ann: map %s: %w", path, err)
	}
	r.rows = r.rows[rows16Header/2:]
	return r, nil
}

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
