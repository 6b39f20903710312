package docstore

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"testing"
)

// TestBlockWithSkippableFrames (issue 25, item 1): a block whose zstd data
// starts with a skippable frame (and has one after its frame) is read like
// any block; the writer never makes one, but the format is "a zstd
// stream", and the reads must not depend on the first bytes being a
// frame's magic. The file is rewritten with every block so wrapped, its
// offsets, block CRCs and table CRC recomputed.
func TestBlockWithSkippableFrames(t *testing.T) {
	path, docs := build(t, 150, 64) // 3 blocks
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	tableOff := int(le.Uint64(raw[len(raw)-trailerSize:]))
	nb := 3
	var out []byte
	out = append(out, raw[:headerSize]...)
	offsets := []uint64{uint64(len(out))}
	var crcs []uint32
	for b := range nb {
		lo, hi := le.Uint64(raw[tableOff+8*b:]), le.Uint64(raw[tableOff+8*(b+1):])
		blk := []byte("\x5e\x2a\x4d\x18\x03\x00\x00\x00abc")
		blk = append(blk, raw[lo:hi]...)
		blk = append(blk, "\x50\x2a\x4d\x18\x00\x00\x00\x00"...)
		out = append(out, blk...)
		offsets = append(offsets, uint64(len(out)))
		crcs = append(crcs, crc32.ChecksumIEEE(blk))
	}
	var table []byte
	for _, o := range offsets {
		table = le.AppendUint64(table, o)
	}
	for _, c := range crcs {
		table = le.AppendUint32(table, c)
	}
	newTable := uint64(len(out))
	out = append(out, table...)
	out = le.AppendUint64(out, newTable)
	out = le.AppendUint32(out, crc32.ChecksumIEEE(table))
	out = append(out, magic...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, row := range []int32{0, 63, 64, 149} {
		if d, err := s.Doc(row); err != nil || d != docs[row] {
			t.Fatalf("row %d: %+v (%v), want %+v", row, d, err, docs[row])
		}
	}
	if err := s.Check(nil); err != nil {
		t.Fatalf("Check: %v", err)
	}
}
