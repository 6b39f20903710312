package decompress

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// skippable is a zstd skippable frame of magic 0x184D2A5n with payload p.
func skippable(n byte, p string) []byte {
	b := []byte{0x50 | n, 0x2a, 0x4d, 0x18, byte(len(p)), byte(len(p) >> 8), byte(len(p) >> 16), byte(len(p) >> 24)}
	return append(b, p...)
}

func zstdFrame(t *testing.T, s string) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll([]byte(s), nil)
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestNewReader(t *testing.T) {
	line1, line2 := "{\"id\": \"a\"}\n", "{\"id\": \"b\"}\n"
	for _, tc := range []struct {
		name string
		in   []byte
		f    Format
		want string
	}{
		{"plain", []byte(line1 + line2), Plain, line1 + line2},
		{"empty", nil, Plain, ""},
		{"three bytes", []byte("{}\n"), Plain, "{}\n"},
		{"gzip", gzipped(t, line1+line2), Gzip, line1 + line2},
		{"gzip members", cat(gzipped(t, line1), gzipped(t, line2)), Gzip, line1 + line2},
		{"zstd", zstdFrame(t, line1+line2), Zstd, line1 + line2},
		// The repro: printf '\x50\x2a\x4d\x18\x05\x00\x00\x00hello'; cat skip.bin 1.zst 2.zst.
		{"zstd after a skippable frame", cat([]byte("\x50\x2a\x4d\x18\x05\x00\x00\x00hello"), zstdFrame(t, line1), zstdFrame(t, line2)), Zstd, line1 + line2},
		{"every skippable magic", cat(skippable(0xf, ""), skippable(0x7, "pzstd"), zstdFrame(t, line1), skippable(0x3, "x"), zstdFrame(t, line2), skippable(0, "end")), Zstd, line1 + line2},
		{"only a skippable frame", skippable(0, "nothing"), Zstd, ""},
		{"text that starts like no magic", []byte("P*M\x19 not a frame\n"), Plain, "P*M\x19 not a frame\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.in), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := io.ReadAll(r)
			if err != nil || string(got) != tc.want || r.Format != tc.f {
				t.Fatalf("got %s %q (%v), want %s %q", r.Format, got, err, tc.f, tc.want)
			}
		})
	}
}

func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"xz", "\xfd7zXZ\x00\x00\x04", "xz-compressed data (magic fd 37 7a 58 5a 00 at byte 0); plain, gzip and zstd are read: decompress it first (xz -d)"},
		{"bzip2", "BZh91AY&SY", "bzip2-compressed"},
		{"lz4", "\x04\x22\x4d\x18\x64\x40", "lz4-compressed"},
		{"zip", "PK\x03\x04\x14\x00", "zip-compressed"},
		{"7z", "7z\xbc\xaf\x27\x1c\x00\x04", "7z-compressed"},
		{"compress", "\x1f\x9d\x90", "compress (.Z)-compressed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.in), 0)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrUnsupported containing %q", err, tc.want)
			}
		})
	}
	// "BZh" without a block-size digit is text.
	if f, err := Sniff([]byte("BZhello")); f != Plain || err != nil {
		t.Fatalf("Sniff(BZhello) = %s %v, want plain", f, err)
	}
}

// TestCorruptStreams: damage after the magic is a Read error, never
// silently short output.
func TestCorruptStreams(t *testing.T) {
	text := strings.Repeat("{\"id\": \"a\", \"contents\": \"some words\"}\n", 200)
	z, g := zstdFrame(t, text), gzipped(t, text)
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"zstd truncated", z[:len(z)/2]},
		{"gzip truncated", g[:len(g)/2]},
		{"skippable frame truncated", skippable(0, "0123456789")[:12]},
		{"plain after a skippable frame", cat(skippable(0, "x"), []byte(text))},
		{"gzip checksum", cat(g[:len(g)-8], []byte{1, 2, 3, 4}, g[len(g)-4:])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.in), 0)
			if err != nil {
				return // refused up front: fine
			}
			defer r.Close()
			if got, err := io.ReadAll(r); err == nil {
				t.Fatalf("read %d bytes and no error, want an error", len(got))
			}
		})
	}
}
