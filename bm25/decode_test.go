package bm25

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"slices"
	"testing"
)

// TestDecodeFastMatchesDecodeBlock checks decodeFast against decodeBlock on
// random row gaps of 1- to 3-byte varints, valid and with one byte changed
// (or the skip entry's last row): when decodeFast accepts the gaps,
// decodeBlock accepts them with the same rows and length, and decodeFast
// accepts all valid gaps of 1- and 2-byte varints.
func TestDecodeFastMatchesDecodeBlock(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	const numDocs = 1 << 22
	for it := range 20000 {
		n := 1 + r.Intn(BlockSize)
		maxGap := []int{100, 300, 20000, 40000}[r.Intn(4)]
		prev := int32(r.Intn(1000)) - 1
		var p []byte
		row, short := prev, true
		for range n {
			gap := r.Intn(maxGap)
			short = short && gap < 1<<14
			p = binary.AppendUvarint(p, uint64(gap))
			row += 1 + int32(gap)
		}
		last := row
		if it%2 == 1 { // damage one byte, or the skip entry's last row
			if r.Intn(4) == 0 {
				last += int32(r.Intn(3)) - 1
			} else {
				p[r.Intn(len(p))] ^= byte(1 + r.Intn(255))
			}
		}
		var fd, bd [BlockSize]int32
		fastEnd, fastOK := decodeFast(p, n, prev, last, numDocs, &fd)
		end, err := decodeBlock(p, n, prev, last, numDocs, bd[:], 0)
		if fastOK && (err != nil || end != fastEnd || !slices.Equal(fd[:n], bd[:n])) {
			t.Fatalf("block %d (n=%d %x): decodeFast accepted it (end %d), decodeBlock: %v (end %d), rows equal %v",
				it, n, p, fastEnd, err, end, slices.Equal(fd[:n], bd[:n]))
		}
		if it%2 == 0 && (err != nil || end != len(p)) {
			t.Fatalf("block %d (n=%d %x): valid gaps: decodeBlock %v, end %d of %d bytes", it, n, p, err, end, len(p))
		}
		if it%2 == 0 && short && (!fastOK || fastEnd != len(p)) {
			t.Fatalf("block %d (n=%d %x): valid gaps of short varints rejected by decodeFast", it, n, p)
		}
	}
}

// TestDecodePostings checks decodePostings on random blocks in the FORMAT
// layout (norm slots, tf bytes, row gaps, escaped lengths, escaped tfs):
// it returns the block's rows, slots and tf bytes, tf and escapedLen give
// every posting its tf and every escaped posting its length, and a block
// cut short or with a byte too many is an ErrCorrupt error, never a panic.
func TestDecodePostings(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	const numDocs = 1 << 30
	for it := range 5000 {
		n := 1 + r.Intn(BlockSize)
		slots, tfb := make([]byte, n), make([]byte, n)
		var gaps, escLens, escTfs []byte
		lens, tfs, rows := make([]uint32, n), make([]uint32, n), make([]int32, n)
		row := int32(-1)
		for i := range n {
			slots[i] = uint8(r.Intn(256))
			if r.Intn(8) == 0 {
				slots[i] = normEscape
			}
			lens[i] = uint32(r.Intn(1 << uint(1+r.Intn(31))))
			if slots[i] == normEscape {
				escLens = le.AppendUint32(escLens, lens[i])
			}
			tfs[i] = uint32(1 + r.Intn(1<<uint(r.Intn(12))))
			tfb[i] = uint8(min(tfs[i], tfEscape))
			if tfb[i] == tfEscape {
				escTfs = le.AppendUint32(escTfs, tfs[i])
			}
			gap := r.Intn(1 << uint(r.Intn(16)))
			gaps = binary.AppendUvarint(gaps, uint64(gap))
			row += 1 + int32(gap)
			rows[i] = row
		}
		p := slices.Concat(slots, tfb, gaps, escLens, escTfs)
		var docs [BlockSize]int32
		bp, err := decodePostings(p, n, -1, row, numDocs, &docs, 0)
		if err != nil || !slices.Equal(docs[:n], rows) || !slices.Equal(bp.slots, slots) || !slices.Equal(bp.tfs, tfb) {
			t.Fatalf("block %d (n=%d): err %v, rows equal %v, slots equal %v, tf bytes equal %v", it, n, err, slices.Equal(docs[:n], rows), slices.Equal(bp.slots, slots), slices.Equal(bp.tfs, tfb))
		}
		for i := range n {
			if got := bp.tf(i); got != tfs[i] {
				t.Fatalf("block %d: posting %d has tf %d, want %d", it, i, got, tfs[i])
			}
			if slots[i] == normEscape {
				if got := bp.escapedLen(i); got != lens[i] {
					t.Fatalf("block %d: escaped posting %d has length %d, want %d", it, i, got, lens[i])
				}
			}
		}
		bad := p[:r.Intn(len(p))] // cut short
		if r.Intn(2) == 0 {
			bad = append(slices.Clone(p), 0) // a byte too many
		}
		if _, err := decodePostings(bad, n, -1, row, numDocs, &docs, 0); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("block %d (n=%d, %d bytes) damaged to %d bytes: error %v, want ErrCorrupt", it, n, len(p), len(bad), err)
		}
	}
}
