package bm25

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSearchAfterDamagedBlock: a search that meets a damaged postings
// block in the middle of a window returns ErrCorrupt and must leave its
// scratch clean, so that the next search with it (the pool hands it on)
// returns exactly the oracle's hits. (Before maxScore.abandon, the window
// buffer kept the failed search's partial scores and match bits.)
func TestSearchAfterDamagedBlock(t *testing.T) {
	dir := t.TempDir()
	bd, err := NewBuilder(Config{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6000 {
		rare := ""
		if i%1000 == 999 {
			rare = " zebra" // six rows: fewer matches than k, so a stale candidate would show
		}
		bd.Add(fmt.Sprintf("common filler%d word%d other%d%s", i%7, i%31, i%3, rare))
	}
	path := filepath.Join(dir, "x.bm25")
	if err := bd.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := parse(data, false) // no checksums: reach the block decoder
	if err != nil {
		t.Fatal(err)
	}
	term, err := ix.lookup("common")
	if err != nil || term < 0 {
		t.Fatalf("lookup: %d %v", term, err)
	}
	_, skips, post, err := ix.postingsOf(term)
	if err != nil {
		t.Fatal(err)
	}
	// Damage block 20 of "common" (rows ≈ 2560..2687, inside the first
	// window): its row gaps become over-long varints.
	off := 0
	for j := range 20 {
		off += int(le.Uint32(skips[skipSize*j+8:]))
	}
	for i := range 16 {
		post[off+i] = 0xff
	}
	intact, _ := os.ReadFile(path)
	good, err := parse(intact, true) // the oracle's index
	if err != nil {
		t.Fatal(err)
	}
	var s scratch
	if _, err := ix.search(&s, "common word3 other1", 10, false); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("search over the damaged block: %v, want ErrCorrupt", err)
	}
	for _, q := range []string{"zebra", "word3 filler2", "other1 word30 zebra"} {
		got, err := ix.search(&s, q, 10, false)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := good.searchOracle(q, 10)
		if !slices.Equal(got, want) {
			t.Fatalf("%q after the failed search: %v, oracle %v", q, got, want)
		}
	}
}
