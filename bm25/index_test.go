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
)

func smallIndexBytes(t testing.TB) []byte {
	t.Helper()
	bd, err := NewBuilder(Config{K1: new(1.2), B: new(0.75)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"the cat sat on the mat", "", "dogs and cats", "日本 👍 dog's"} {
		if _, err := bd.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := bd.writeTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	bd, _ := NewBuilder(Config{K1: new(1.5), B: new(0.3)})
	for _, s := range texts {
		bd.Add(s)
	}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "a.bm25"), filepath.Join(dir, "b.bm25")
	if err := bd.WriteFile(p1); err != nil {
		t.Fatal(err)
	}
	if err := bd.WriteFile(p2); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if !bytes.Equal(b1, b2) {
		t.Error("two writes of the same builder differ: the format must be deterministic")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("dir holds %d entries, want 2 (no temp file left behind)", len(ents))
	}
	ix, err := Open(p1)
	if err != nil {
		t.Fatal(err)
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
		if ix.lookup(term) < 0 {
			t.Errorf("term %q not found after round trip", term)
		}
	}
	if ix.lookup("zzz-not-there") >= 0 || ix.lookup("") >= 0 {
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
	for i := range good {
		bad := slices.Clone(good)
		bad[i] ^= 0x41
		if _, err := parse(bad, true); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: err %v, want ErrCorrupt", i, err)
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
		{"version", flip(8), "unsupported version"},
		{"truncated postings", good[:len(good)-6], `truncated: section "postings"`},
		{"truncated lengths", good[:headerSize+8], `section "document lengths" at offset 64`},
		{"checksum", flip(headerSize), "checksum at offset"},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, crc := range []bool{true, false} {
			ix, err := parse(data, crc)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("error %v does not wrap ErrCorrupt", err)
				}
				continue
			}
			for _, q := range []string{"cat", "dog mat sat", "日本 👍", "zzz"} {
				for _, h := range ix.Search(q, 3) {
					if h.Row < 0 || int(h.Row) >= ix.NumDocs() {
						t.Fatalf("hit row %d out of [0, %d)", h.Row, ix.NumDocs())
					}
				}
			}
		}
	})
}
