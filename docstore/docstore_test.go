package docstore

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
)

func build(t testing.TB, n, block int) (string, []rlsearch.Document) {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	path := filepath.Join(t.TempDir(), "docs.zst")
	w, err := Create(path, block)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]rlsearch.Document, n)
	for i := range docs {
		docs[i] = rlsearch.Document{ID: fmt.Sprintf("doc-%d", i), Contents: rlsearch.MakeContents(fmt.Sprint("T", i), strings.Repeat("word ", rng.Intn(50))+"ü€😀")}
		if err := w.Add(docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, docs
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct{ n, block int }{{0, 4}, {1, 4}, {4, 4}, {5, 4}, {1000, 64}, {130, 0}} {
		t.Run(fmt.Sprintf("n=%d/block=%d", tc.n, tc.block), func(t *testing.T) {
			path, docs := build(t, tc.n, tc.block)
			s, err := Open(path, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Len() != tc.n {
				t.Fatalf("Len = %d, want %d", s.Len(), tc.n)
			}
			for _, row := range rand.New(rand.NewSource(2)).Perm(tc.n) {
				got, err := s.Doc(int32(row))
				if err != nil || got != docs[row] {
					t.Fatalf("Doc(%d) = %+v, %v; want %+v", row, got, err, docs[row])
				}
			}
			for _, bad := range []int32{-1, int32(tc.n)} {
				if _, err := s.Doc(bad); !errors.Is(err, ErrRow) {
					t.Errorf("Doc(%d) error %v, want ErrRow", bad, err)
				}
			}
			if err := s.Verify(); err != nil {
				t.Fatalf("Verify of a good store: %v", err)
			}
			var seen int
			if err := s.Scan(func(row int32, d rlsearch.Document) error {
				if d != docs[row] || int(row) != seen {
					return fmt.Errorf("row %d: %+v", row, d)
				}
				seen++
				return nil
			}); err != nil || seen != tc.n {
				t.Fatalf("Scan: %v after %d rows", err, seen)
			}
		})
	}
}

func TestConcurrentReads(t *testing.T) {
	path, docs := build(t, 2000, 16)
	s, err := Open(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 500; i++ {
				row := rng.Intn(len(docs))
				if d, err := s.Doc(int32(row)); err != nil || d != docs[row] {
					t.Errorf("Doc(%d) = %+v, %v", row, d, err)
					return
				}
			}
		}(int64(g))
	}
	wg.Wait()
}

func TestCorruptFiles(t *testing.T) {
	path, _ := build(t, 300, 16)
	good, _ := os.ReadFile(path)
	for _, tc := range []struct {
		name   string
		mutate func([]byte) []byte
		atOpen bool
		want   string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-5] }, true, "trailer"},
		{"tiny", func(b []byte) []byte { return b[:10] }, true, "shorter"},
		{"bad magic", func(b []byte) []byte { b[0] = 'X'; return b }, true, "magic at offset 0"},
		{"table flip", func(b []byte) []byte { b[len(b)-trailerSize-3] ^= 1; return b }, true, "table checksum"},
		{"block flip", func(b []byte) []byte { b[headerSize+5] ^= 0xff; return b }, false, "block 0 at offset 24 fails its checksum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bad.zst")
			os.WriteFile(p, tc.mutate(append([]byte(nil), good...)), 0o644)
			s, err := Open(p, 0)
			if err == nil {
				defer s.Close()
				if tc.atOpen {
					t.Fatal("Open accepted a corrupt file")
				}
				if verr := s.Verify(); !errors.Is(verr, ErrCorrupt) || !strings.Contains(verr.Error(), tc.want) {
					t.Errorf("Verify: %v, want ErrCorrupt containing %q", verr, tc.want)
				}
				_, err = s.Doc(0)
			}
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrCorrupt containing %q", err, tc.want)
			}
		})
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "docs.zst"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Add(rlsearch.Document{ID: "a", Contents: "x"})
	w.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Abort left %d files", len(ents))
	}
}

func FuzzOpen(f *testing.F) {
	path, _ := build(f, 40, 8)
	good, _ := os.ReadFile(path)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f.zst")
		os.WriteFile(p, data, 0o644)
		s, err := Open(p, 0)
		if err != nil {
			return
		}
		defer s.Close()
		for r := 0; r < s.Len() && r < 100; r++ {
			s.Doc(int32(r))
		}
	})
}

func BenchmarkDoc(b *testing.B) {
	path, docs := build(b, 20000, 64)
	s, err := Open(path, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewSource(3))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Doc(int32(rng.Intn(len(docs)))); err != nil {
			b.Fatal(err)
		}
	}
}
