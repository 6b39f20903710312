package testutil

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdEnc is the encoder of ZstdFrames (EncodeAll is safe for concurrent
// use).
var zstdEnc, _ = zstd.NewWriter(nil)

// ZstdFrames compresses each part as its own zstd frame and concatenates
// the frames (what `cat 1.zst 2.zst` makes).
func ZstdFrames(parts ...string) []byte {
	var out []byte
	for _, p := range parts {
		out = zstdEnc.EncodeAll([]byte(p), out)
	}
	return out
}

// SkippableFrame is a zstd skippable frame (magic 0x184D2A50 | n&0xf, RFC
// 8878 §3.1.2) holding payload, as pzstd writes one before its frames.
func SkippableFrame(n byte, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0x184D2A50|uint32(n&0xf))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// IssueSkippableFrame is issue 25's repro of a leading skippable frame:
// printf '\x50\x2a\x4d\x18\x05\x00\x00\x00hello'.
var IssueSkippableFrame = []byte("\x50\x2a\x4d\x18\x05\x00\x00\x00hello")

// Gzip is s as one gzip member.
func Gzip(tb testing.TB, s string) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
