package bm25

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func smallIndexBytes(t testing.TB) []byte {
	t.Helper()
	bd, err := NewBuilder(Config{K1: 1.2, B: 0.75})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"the cat sat on the mat", "", "dogs and cats", "日本 👍 dog's"} {
		if _, err := bd.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return writeBytes(t, bd)
}

// writeBytes writes bd's index to a temporary file and returns its bytes.
func writeBytes(t testing.TB, bd *Builder) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ix.bm25")
	if err := bd.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.bm25"), filepath.Join(dir, "b.bm25")
	for i, p := range []string{p1, p2} {
		// Two builders with different worker counts must write the same bytes.
		bd, _ := NewBuilder(Config{K1: 1.5, B: 0.3, Workers: 1 + 3*i, TempDir: t.TempDir()})
		for _, s := range texts {
			bd.Add(s)
		}
		if err := bd.WriteFile(p); err != nil {
			t.Fatal(err)
		}
		if err := bd.WriteFile(p); !errors.Is(err, ErrBuilderDone) {
			t.Errorf("second WriteFile: err %v, want ErrBuilderDone", err)
		}
		if _, err := bd.Add("x"); !errors.Is(err, ErrBuilderDone) {
			t.Errorf("Add after WriteFile: err %v, want ErrBuilderDone", err)
		}
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if !bytes.Equal(b1, b2) {
		t.Error("two builds of the same texts differ: the format must be deterministic")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("dir holds %d entries, want 2 (no temp file left behind)", len(ents))
	}
	ix, err := Open(p1)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Check(); err != nil {
		t.Fatalf("Check of a fresh index: %v", err)
	}
	if k1, b := ix.Params(); float32(k1) != 1.5 || float32(b) != 0.3 {
		t.Errorf("Params = %v, %v; want 1.5, 0.3", k1, b)
	}
	terms := map[string]bool{}
	var sum, nonEmpty int
	for i, s := range texts {
		toks := Analyze(s)
		if got := ix.DocLen(int32(i)); got != len(toks) {
			t.Fatalf("DocLen(%d) = %d, want %d", i, got, len(toks))
		}
		for _, tok := range toks {
			terms[tok] = true
		}
		sum += len(toks)
		if len(toks) > 0 {
			nonEmpty++
		}
	}
	if ix.NumDocs() != len(texts) || ix.NumTerms() != len(terms) {
		t.Errorf("NumDocs, NumTerms = %d, %d; want %d, %d", ix.NumDocs(), ix.NumTerms(), len(texts), len(terms))
	}
	if want := float64(float32(float64(sum) / float64(nonEmpty))); ix.AvgDocLen() != want {
		t.Errorf("AvgDocLen = %v, want %v", ix.AvgDocLen(), want)
	}
	for term := range terms {
		if id, err := ix.lookup(term); id < 0 || err != nil {
			t.Errorf("term %q not found after round trip", term)
		}
	}
	if id, _ := ix.lookup("zzz-not-there"); id >= 0 {
		t.Error("lookup found a term that was never added")
	}
	if id, _ := ix.lookup(""); id >= 0 {
		t.Error("lookup found a term that was never added")
	}
}

func TestEmptyIndex(t *testing.T) {
	ix := buildAndOpen(t, Config{}, nil)
	if ix.NumDocs() != 0 || ix.NumTerms() != 0 || ix.AvgDocLen() != 0 {
		t.Errorf("empty index: %d docs %d terms avgdl %v", ix.NumDocs(), ix.NumTerms(), ix.AvgDocLen())
	}
	if hits := ix.Search("anything", 10); hits != nil {
		t.Errorf("Search on empty index = %v, want nil", hits)
	}
}

// TestOpenRefusesDamage truncates the file at every length and flips every
// byte: each must fail with ErrCorrupt, never panic.
func TestOpenRefusesDamage(t *testing.T) {
	good := smallIndexBytes(t)
	if _, err := parse(good, true); err != nil {
		t.Fatalf("intact index refused: %v", err)
	}
	for n := 0; n < len(good); n++ {
		if _, err := parse(good[:n], true); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: err %v, want ErrCorrupt", n, len(good), err)
		}
	}
	// A flipped byte is found by Open or, at the latest, by Check; searches
	// before that return results or ErrCorrupt, never panic.
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x41
		ix, err := parse(bad, true)
		if err == nil {
			for _, q := range []string{"cat", "dog mat", "日本 👍", "sat"} {
				if _, serr := ix.SearchErr(q, 3); serr != nil && !errors.Is(serr, ErrCorrupt) {
					t.Fatalf("byte %d flipped: search error %v does not wrap ErrCorrupt", i, serr)
				}
			}
			err = ix.Check()
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err %v, want ErrCorrupt from Open or Check", i, err)
		}
	}
	if _, err := parse(append(slices.Clone(good), 0), true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("trailing byte: err %v, want ErrCorrupt", err)
	}
}

func TestOpenErrorMessages(t *testing.T) {
	good := smallIndexBytes(t)
	flip := func(i int) []byte { b := slices.Clone(good); b[i] ^= 1; return b }
	tests := []struct {
		name string
		data []byte
		want string // substring naming the section or offset
	}{
		{"short", good[:10], "shorter than"},
		{"magic", flip(0), "bad magic"},
		{"version", func() []byte { b := slices.Clone(good); b[8] = 9; return b }(), "unsupported version 9"},
		{"version 2", func() []byte { b := slices.Clone(good); b[8] = 2; return b }(), "format version 2 is no longer supported"},
		{"truncated term bytes", good[:len(good)-6], `truncated: section "term bytes"`},
		{"truncated postings", good[:headerSize+4*4+3], `truncated: section "postings" at offset 144`},
		{"truncated lengths", good[:headerSize+8], `section "document lengths" at offset 128`},
		{"header checksum", flip(20), "header checksum at offset 124"},
		{"lengths checksum", flip(headerSize), "document lengths at offset 128: CRC-32C"},
		{"version 1", append([]byte(magic+"\x01\x00\x00\x00"), make([]byte, 60)...), "rebuild the index"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.data, true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// Open adds the path and maps a missing file to an I/O error, not ErrCorrupt.
	_, err := Open(filepath.Join(t.TempDir(), "missing.bm25"))
	if err == nil || errors.Is(err, ErrCorrupt) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err %v, want os.ErrNotExist", err)
	}
	p := filepath.Join(t.TempDir(), "bad.bm25")
	os.WriteFile(p, flip(headerSize), 0o644)
	if _, err := Open(p); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
		t.Errorf("corrupt file: err %v, want ErrCorrupt naming %s", err, p)
	}
}

// FuzzOpen feeds mutated index files to the decoder, with and without the
// checksum check (without, mutations reach the structural checks). An
// accepted index must answer searches without panicking.
func FuzzOpen(f *testing.F) {
	good := smallIndexBytes(f)
	f.Add(good)
	f.Add(good[:headerSize+8])
	b := slices.Clone(good)
	b[len(b)-10] ^= 0xff
	f.Add(b)
	f.Add(shardIndexBytes(f)) // a shard file (FlagShard): global statistics and dfs
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, crc := range []bool{true, false} {
			d := data
			if !crc && len(data) >= 16 {
				// Seeds of format version 2 (blocks without norm slots)
				// or written before FlagNFC: reach the structural checks
				// of this version behind the version and the flag too.
				d = slices.Clone(data)
				if le.Uint32(d[8:]) == 2 {
					le.PutUint32(d[8:], formatVersion)
				}
				le.PutUint32(d[12:], le.Uint32(d[12:])|FlagNFC)
			}
			ix, err := parse(d, crc)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrAnalyzer) {
					t.Fatalf("error %v wraps neither ErrCorrupt nor ErrAnalyzer", err)
				}
				continue
			}
			for _, q := range []string{"cat", "dog mat sat", "日本 👍", "zzz"} {
				for _, exhaustive := range []bool{false, true} {
					var hits []rlsearch.Hit
					var err error
					if exhaustive {
						hits, err = ix.searchOracle(q, 3)
					} else {
						hits, err = ix.SearchErr(q, 3)
					}
					if err != nil && !errors.Is(err, ErrCorrupt) {
						t.Fatalf("search error %v does not wrap ErrCorrupt", err)
					}
					for _, h := range hits {
						if h.Row < 0 || int(h.Row) >= ix.NumDocs() {
							t.Fatalf("hit row %d out of [0, %d)", h.Row, ix.NumDocs())
						}
					}
				}
			}
			if err := ix.Check(); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Check error %v does not wrap ErrCorrupt", err)
			}
		}
	})
}

// TestHostileSections flips every bit pattern 0x01, 0x80 and 0xff into every
// byte after the document lengths of a multi-block index and opens it with
// the checksums off (as a hostile file with valid checksums would be):
// searches and Check must return hits or ErrCorrupt, never panic.
func TestHostileSections(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	texts := make([]string, 600)
	for i := range texts {
		texts[i] = randomText(r, 12)
	}
	bd, _ := NewBuilder(Config{})
	for _, s := range texts {
		bd.Add(s)
	}
	good := writeBytes(t, bd)
	queries := []string{"alpha beta gamma", "the cats running", "zeta eta theta iota kappa lambda", "42 日"}
	start := headerSize + 4*len(texts)
	step := 1
	if raceEnabled {
		step = 7
	}
	for i := start; i < len(good); i += step {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad := slices.Clone(good)
			bad[i] ^= x
			ix, err := parse(bad, false)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d ^ %#x: Open error %v does not wrap ErrCorrupt", i, x, err)
				}
				continue
			}
			for _, q := range queries {
				for _, k := range []int{1, 10, 1000} {
					for _, f := range []func(string, int) ([]rlsearch.Hit, error){ix.searchPruned, ix.searchOracle} {
						if _, err := f(q, k); err != nil && !errors.Is(err, ErrCorrupt) {
							t.Fatalf("byte %d ^ %#x: search error %v does not wrap ErrCorrupt", i, x, err)
						}
					}
				}
			}
			if err := ix.Check(); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#x: Check error %v does not wrap ErrCorrupt", i, x, err)
			}
		}
	}
}
