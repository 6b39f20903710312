package vecfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestCompressedFileRefused (issue 25, item 1): a compressed vector file,
// also a zstd one that starts with a skippable frame, is refused naming
// the compression and what to do, not reported as an unknown format or
// parsed as .fvecs rows.
func TestCompressedFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name, head, file, want string
	}{
		{"zstd", "\x28\xb5\x2f\xfd\x04\x58\x00\x00", "e5_Flat.index.zst", "e5_Flat.index.zst: zstd-compressed; vectors are imported from the uncompressed file"},
		{"zstd after a skippable frame", "\x50\x2a\x4d\x18\x05\x00\x00\x00hello\x28\xb5\x2f\xfd", "vectors.fvecs", "vectors.fvecs: zstd-compressed"},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", "v.npy.gz", "(gzip -d)"},
		{"xz", "\xfd7zXZ\x00\x00\x04", "v.fvecs", "xz-compressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader([]byte(tc.head)), int64(len(tc.head)), tc.file)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrUnsupported containing %q", err, tc.want)
			}
		})
	}
}
