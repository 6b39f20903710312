//go:build unix

package ann

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// mapU16 maps the whole file read-only as uint16 values.
func mapU16(f *os.File, size int64) ([]uint16, func() error, error) {
	if !littleEndian {
		return nil, nil, errors.New("big-endian platform: fp16 rows are little-endian")
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	u := unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
	return u, func() error { return syscall.Munmap(b) }, nil
}
