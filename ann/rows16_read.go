//go:build !unix

package ann

import (
	"encoding/binary"
	"io"
	"os"
)

// mapU16 reads the whole file into memory where mmap is not available.
func mapU16(f *os.File, size int64) ([]uint16, func() error, error) {
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	u := make([]uint16, size/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return u, func() error { return nil }, nil
}
