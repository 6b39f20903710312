package bm25

import (
	"encoding/binary"
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
		fastOK := decodeFast(p, n, prev, last, numDocs, &fd, &ft)
		err := decodeBlock(p, n, prev, last, numDocs, bd[:], bt[:], 0)
		if fastOK && (err != nil || !slices.Equal(fd[:n], bd[:n]) || !slices.Equal(ft[:n], bt[:n])) {
			t.Fatalf("block %d (n=%d %x): decodeFast accepted it, decodeBlock: %v, rows equal %v, tfs equal %v",
				it, n, p, err, slices.Equal(fd[:n], bd[:n]), slices.Equal(ft[:n], bt[:n]))
		}
		if it%2 == 0 && short && !fastOK {
			t.Fatalf("block %d (n=%d %x): valid block of short varints rejected by decodeFast", it, n, p)
		}
	}
}
