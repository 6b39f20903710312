package bm25

import (
	"encoding/binary"
	"errors"
	"math/rand"
	"slices"
	"testing"
)

// TestDecodeFastMatchesDecodeBlock checks decodeFast against decodeBlock on
// random blocks with 1- to 3-byte varints, valid and with one byte changed:
// when decodeFast accepts a block, decodeBlock accepts it with the same
// postings, and decodeFast accepts every valid block of 1- and 2-byte
// varints.
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
			gap, tf := r.Intn(maxGap), 1+r.Intn([]int{5, 200, 20000}[r.Intn(3)])
			short = short && gap < 1<<14 && tf < 1<<14
			p = binary.AppendUvarint(p, uint64(gap))
			p = binary.AppendUvarint(p, uint64(tf))
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
		var ft, bt [BlockSize]uint32
		fastEnd, fastOK := decodeFast(p, n, prev, last, numDocs, &fd, &ft)
		end, err := decodeBlock(p, n, prev, last, numDocs, bd[:], bt[:], 0)
		if fastOK && (err != nil || end != fastEnd || !slices.Equal(fd[:n], bd[:n]) || !slices.Equal(ft[:n], bt[:n])) {
			t.Fatalf("block %d (n=%d %x): decodeFast accepted it (end %d), decodeBlock: %v (end %d), rows equal %v, tfs equal %v",
				it, n, p, fastEnd, err, end, slices.Equal(fd[:n], bd[:n]), slices.Equal(ft[:n], bt[:n]))
		}
		if it%2 == 0 && (err != nil || end != len(p)) {
			t.Fatalf("block %d (n=%d %x): valid pairs: decodeBlock %v, end %d of %d bytes", it, n, p, err, end, len(p))
		}
		if it%2 == 0 && short && (!fastOK || fastEnd != len(p)) {
			t.Fatalf("block %d (n=%d %x): valid block of short varints rejected by decodeFast", it, n, p)
		}
	}
}

// TestDecodePostings checks decodePostings on random blocks of norm slots,
// pairs and escaped lengths: it returns the block's slots, escapeLen gives
// every escaped posting its length, the postings equal decodeBlock's, and
// a block cut short or with a byte too many is an ErrCorrupt error, never
// a panic.
func TestDecodePostings(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	const numDocs = 1 << 30
	for it := range 5000 {
		n := 1 + r.Intn(BlockSize)
		slots := make([]byte, n)
		var pairs, esc []byte
		lens := make([]uint32, n)
		for i := range slots {
			slots[i] = uint8(r.Intn(256))
			if r.Intn(8) == 0 {
				slots[i] = normEscape
			}
			lens[i] = uint32(r.Intn(1 << uint(1+r.Intn(31))))
			if slots[i] == normEscape {
				esc = le.AppendUint32(esc, lens[i])
			}
		}
		row := int32(-1)
		for range n {
			gap, tf := r.Intn(1<<uint(r.Intn(16))), 1+r.Intn(1<<uint(r.Intn(10)))
			pairs = binary.AppendUvarint(pairs, uint64(gap))
			pairs = binary.AppendUvarint(pairs, uint64(tf))
			row += 1 + int32(gap)
		}
		p := slices.Concat(slots, pairs, esc)
		var docs, wd [BlockSize]int32
		var tfs, wt [BlockSize]uint32
		gs, ge, err := decodePostings(p, n, -1, row, numDocs, &docs, &tfs, 0)
		if _, werr := decodeBlock(pairs, n, -1, row, numDocs, wd[:], wt[:], 0); werr != nil {
			t.Fatal(werr)
		}
		if err != nil || !slices.Equal(gs, slots) || !slices.Equal(docs[:n], wd[:n]) || !slices.Equal(tfs[:n], wt[:n]) {
			t.Fatalf("block %d (n=%d): err %v, slots equal %v, rows equal %v, tfs equal %v", it, n, err, slices.Equal(gs, slots), slices.Equal(docs[:n], wd[:n]), slices.Equal(tfs[:n], wt[:n]))
		}
		for i := range n {
			if slots[i] == normEscape {
				if got := escapeLen(gs, ge, i); got != lens[i] {
					t.Fatalf("block %d: escaped posting %d has length %d, want %d", it, i, got, lens[i])
				}
			}
		}
		bad := p[:r.Intn(len(p))] // cut short
		if r.Intn(2) == 0 {
			bad = append(slices.Clone(p), 0) // a byte too many
		}
		if _, _, err := decodePostings(bad, n, -1, row, numDocs, &docs, &tfs, 0); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("block %d (n=%d, %d bytes) damaged to %d bytes: error %v, want ErrCorrupt", it, n, len(p), len(bad), err)
		}
	}
}
