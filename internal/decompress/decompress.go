package decompress

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// Format is the compression of a stream.
type Format string

// The formats Reader decompresses.
const (
	Plain Format = "plain"
	Gzip  Format = "gzip"
	Zstd  Format = "zstd"
)

// ErrUnsupported is wrapped by the error for a stream in a recognised
// compression format that is not read (xz, bzip2, lz4, zip, 7z, .Z).
var ErrUnsupported = errors.New("decompress: unsupported compression")

// Magic numbers (file format specifications: RFC 1952 §2.3.1 gzip, RFC
// 8878 §3.1.1 zstd frame and §3.1.2 skippable frame, the xz file format
// 1.1.0 §2.1.1.1, bzip2's "BZh" + block size digit, the LZ4 frame format
// §1, PKWARE APPNOTE 4.3.7 local file header, 7-Zip's signature header,
// compress(1)'s 0x1f 0x9d).
var (
	magicGzip  = []byte{0x1f, 0x8b}
	magicZstd  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicXz    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	magicLz4   = []byte{0x04, 0x22, 0x4d, 0x18}
	magicZip   = []byte{'P', 'K', 0x03, 0x04}
	magic7z    = []byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}
	magicUnixZ = []byte{0x1f, 0x9d}
)

// HeadLen is the number of leading bytes Sniff needs for a certain answer.
const HeadLen = 8

// isSkippable reports whether b starts with the magic of a zstd skippable
// frame: 0x184D2A5? little-endian.
func isSkippable(b []byte) bool {
	return len(b) >= 4 && b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18
}

// Sniff names the format of a stream from its first bytes (at least
// HeadLen of them, or the whole stream when shorter). A stream that starts
// with a zstd skippable frame is Zstd whatever follows it (the decoder
// names a bad frame after it). An unread compression format returns an
// error wrapping ErrUnsupported that names it; anything else is Plain.
func Sniff(head []byte) (Format, error) {
	unsupported := func(name, tool string) (Format, error) {
		return "", fmt.Errorf("%w: %s-compressed data (magic % x at byte 0); plain, gzip and zstd are read: decompress it first (%s) or recompress it with zstd or gzip", ErrUnsupported, name, head[:min(len(head), 6)], tool)
	}
	switch {
	case bytes.HasPrefix(head, magicGzip):
		return Gzip, nil
	case bytes.HasPrefix(head, magicZstd), isSkippable(head):
		return Zstd, nil
	case bytes.HasPrefix(head, magicXz):
		return unsupported("xz", "xz -d")
	case len(head) >= 4 && bytes.HasPrefix(head, []byte("BZh")) && head[3] >= '1' && head[3] <= '9':
		return unsupported("bzip2", "bzip2 -d")
	case bytes.HasPrefix(head, magicLz4):
		return unsupported("lz4", "lz4 -d")
	case bytes.HasPrefix(head, magicZip):
		return unsupported("zip", "unzip")
	case bytes.HasPrefix(head, magic7z):
		return unsupported("7z", "7z x")
	case bytes.HasPrefix(head, magicUnixZ):
		return unsupported("compress (.Z)", "uncompress")
	}
	return Plain, nil
}

// Reader reads the decompressed bytes of a stream, buffered (ReadBytes,
// Peek and the other bufio.Reader methods read decompressed bytes).
type Reader struct {
	*bufio.Reader
	// Format is the stream's compression.
	Format Format
	close  func()
}

// NewReader sniffs r's first bytes and returns a Reader of its
// decompressed bytes, buffered with bufSize bytes (at least 4,096; a
// compressed stream has a second such buffer under its decompressor):
// plain streams are read through unchanged. The decompressor reads ahead of what
// the caller consumed. Errors: ErrUnsupported (wrapped) for an unread
// compression, the gzip header's error for a bad gzip stream; a bad zstd
// frame or a truncated stream shows up as an error of Read. Close the
// Reader to release the decompressor (it does not close r).
func NewReader(r io.Reader, bufSize int) (*Reader, error) {
	bufSize = max(bufSize, 4096)
	br := bufio.NewReaderSize(r, bufSize)
	head, _ := br.Peek(HeadLen)
	f, err := Sniff(head)
	if err != nil {
		return nil, err
	}
	switch f {
	case Gzip:
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: bad header at byte offset 0 (a gzip magic, then not a gzip header): %w", err)
		}
		return &Reader{Reader: bufio.NewReaderSize(gz, bufSize), Format: Gzip, close: func() { gz.Close() }}, nil
	case Zstd:
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return &Reader{Reader: bufio.NewReaderSize(zr, bufSize), Format: Zstd, close: zr.Close}, nil
	}
	return &Reader{Reader: br, Format: Plain, close: func() {}}, nil
}

// Close releases the decompressor; it does not close the underlying
// stream. It always returns nil.
func (r *Reader) Close() error {
	if r.close != nil {
		r.close()
		r.close = nil
	}
	return nil
}

// Open opens the file at path and returns a Reader of its decompressed
// bytes (see NewReader, 1 MiB buffers); closing the Reader closes the
// file. Errors name path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, 1<<20)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	dec := r.close
	r.close = func() { dec(); f.Close() }
	return r, nil
}
