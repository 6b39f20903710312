//go:build !unix

package bm25

import (
	"fmt"
	"io"
	"os"
)

// mapFile reads the whole file into memory on systems without mmap support
// in this package; release only drops the reference.
func mapFile(f *os.File, size int64) (data []byte, release func() error, err error) {
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("file of %d bytes does not fit the address space", size)
	}
	data = make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}
