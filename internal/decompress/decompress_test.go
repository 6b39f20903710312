package decompress

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

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
		{"gzip", testutil.Gzip(t, line1+line2), Gzip, line1 + line2},
		{"gzip members", cat(testutil.Gzip(t, line1), testutil.Gzip(t, line2)), Gzip, line1 + line2},
		{"zstd", testutil.ZstdFrames(line1 + line2), Zstd, line1 + line2},
		// The issue's repro: printf '\x50\x2a\x4d\x18\x05\x00\x00\x00hello'; cat skip.bin 1.zst 2.zst.
		{"zstd after a skippable frame", cat(testutil.IssueSkippableFrame, testutil.ZstdFrames(line1), testutil.ZstdFrames(line2)), Zstd, line1 + line2},
		{"every skippable magic", cat(testutil.SkippableFrame(0xf, nil), testutil.SkippableFrame(0x7, []byte("pzstd")), testutil.ZstdFrames(line1), testutil.SkippableFrame(0x3, []byte("x")), testutil.ZstdFrames(line2), testutil.SkippableFrame(0, []byte("end"))), Zstd, line1 + line2},
		{"only a skippable frame", testutil.SkippableFrame(0, []byte("nothing")), Zstd, ""},
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
	z, g := testutil.ZstdFrames(text), testutil.Gzip(t, text)
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"zstd truncated", z[:len(z)/2]},
		{"gzip truncated", g[:len(g)/2]},
		{"skippable frame truncated", testutil.SkippableFrame(0, []byte("0123456789"))[:12]},
		{"plain after a skippable frame", cat(testutil.SkippableFrame(0, []byte("x")), []byte(text))},
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
