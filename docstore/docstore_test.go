package docstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

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
			if err := s.CheckCRC(); err != nil {
				t.Fatalf("CheckCRC of a good store: %v", err)
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
				if verr := s.CheckCRC(); !errors.Is(verr, ErrCorrupt) || !strings.Contains(verr.Error(), tc.want) {
					t.Errorf("CheckCRC: %v, want ErrCorrupt containing %q", verr, tc.want)
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
		s.Check(nil)
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

// serialFile is the oracle for the writer: the file format of doc.go
// written in the simplest way, one block after the other with a
// single-threaded encoder.
func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

func serialFile(t testing.TB, docs []rlsearch.Document, block int) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	le := binary.LittleEndian
	out := append([]byte(magic), 0, 0, 0, 0, 0, 0, 0, 0)
	le.PutUint32(out[8:], version)
	le.PutUint32(out[12:], uint32(block))
	out = le.AppendUint64(out, uint64(len(docs)))
	var offsets []uint64
	var crcs []uint32
	for lo := 0; lo < len(docs); lo += block {
		var raw []byte
		for _, d := range docs[lo:min(lo+block, len(docs))] {
			raw = binary.AppendUvarint(raw, uint64(len(d.ID)))
			raw = append(raw, d.ID...)
			raw = binary.AppendUvarint(raw, uint64(len(d.Contents)))
			raw = append(raw, d.Contents...)
		}
		comp := enc.EncodeAll(raw, nil)
		offsets = append(offsets, uint64(len(out)))
		crcs = append(crcs, crc32IEEE(comp))
		out = append(out, comp...)
	}
	tableOff := uint64(len(out))
	var table []byte
	for _, o := range append(offsets, tableOff) {
		table = le.AppendUint64(table, o)
	}
	for _, c := range crcs {
		table = le.AppendUint32(table, c)
	}
	out = append(out, table...)
	out = le.AppendUint64(out, tableOff)
	out = le.AppendUint32(out, crc32IEEE(table))
	return append(out, magic...)
}

// TestWorkersByteIdentical: the parallel writer writes the same bytes as
// the serial oracle for every worker count, at awkward sizes.
func TestWorkersByteIdentical(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	docs := make([]rlsearch.Document, 1037)
	for i := range docs {
		docs[i] = rlsearch.Document{ID: fmt.Sprint("d", i), Contents: strings.Repeat(fmt.Sprint("w", rng.Intn(100), " "), rng.Intn(80))}
	}
	for _, n := range []int{0, 1, 63, 64, 65, 1037} {
		for _, block := range []int{1, 7, 64} {
			want := serialFile(t, docs[:n], block)
			for _, workers := range []int{1, 2, 3, 8} {
				path := filepath.Join(t.TempDir(), "docs.zst")
				w, err := NewWriter(path, WriterConfig{BlockDocs: block, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range docs[:n] {
					if err := w.Add(d); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, _ := os.ReadFile(path)
				if !bytes.Equal(got, want) {
					t.Fatalf("n=%d block=%d workers=%d: %d bytes differ from the serial oracle's %d", n, block, workers, len(got), len(want))
				}
			}
		}
	}
}

func TestWriterConfigValidate(t *testing.T) {
	for _, c := range []WriterConfig{{BlockDocs: -1}, {Workers: -1}} {
		if _, err := NewWriter(filepath.Join(t.TempDir(), "d.zst"), c); err == nil {
			t.Errorf("NewWriter(%+v) accepted a bad config", c)
		}
	}
}

func TestCheck(t *testing.T) {
	path, _ := build(t, 300, 16)
	s, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls, last := 0, 0
	if err := s.Check(func(done, total int) error { calls++; last = done; return nil }); err != nil {
		t.Fatalf("Check of a good store: %v", err)
	}
	s.Close()
	if calls != s.NumBlocks() || last != s.NumBlocks() || s.NumBlocks() != 19 {
		t.Errorf("progress called %d times (last %d) for %d blocks, want 19", calls, last, s.NumBlocks())
	}
	good, _ := os.ReadFile(path)
	// Flip one byte in the third block: Check must name block 2 and its offset.
	s, _ = Open(path, 0)
	off := s.offsets[2]
	s.Close()
	bad := append([]byte(nil), good...)
	bad[off+3] ^= 0x40
	p := filepath.Join(t.TempDir(), "bad.zst")
	os.WriteFile(p, bad, 0o644)
	s, err = Open(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Check(nil)
	want := fmt.Sprintf("%s: block 2 at offset %d fails its checksum", p, off)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Check: %v, want ErrCorrupt containing %q", err, want)
	}
}

// BenchmarkDoc1M measures Doc(row) over a generated 1M-row store (about
// 100 bytes per row, 64 rows per block): "miss" reads uniformly random rows
// through a 1-block cache (one pread + one block decode each, file in the
// OS page cache), "hit" reads rows of 256 hot blocks held by the cache.
func BenchmarkDoc1M(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "docs.zst")
	w, err := Create(path, 0)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	words := strings.Fields("the of and in to a was is for on as by with he at from his an were are which this also be has or had first one their its new after but who not they have her she two been other when there all during into school time may years more most only over city some world would where later up such used many can state about national out known university united then made")
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.Reset()
		for k := 0; k < 16+rng.Intn(8); k++ {
			sb.WriteString(words[rng.Intn(len(words))])
			sb.WriteByte(' ')
		}
		if err := w.Add(rlsearch.Document{ID: fmt.Sprint(i), Contents: sb.String()}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		cache int
		rows  int
	}{{"miss", 1, n}, {"hit", 1024, 256 * 64}} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Open(path, tc.cache)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewSource(3))
			for i := 0; i < 2*tc.rows/64 && tc.cache > 1; i++ {
				s.Doc(int32(rng.Intn(tc.rows)))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Doc(int32(rng.Intn(tc.rows))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWriterBoundedAndWriteErrors: the blocks in flight stay within
// 2·Workers+2 however many rows are added, and a failing file makes Add and
// Close return the error (no deadlock, no file left).
func TestWriterBoundedAndWriteErrors(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(filepath.Join(dir, "docs.zst"), WriterConfig{BlockDocs: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if err := w.Add(rlsearch.Document{ID: fmt.Sprint(i), Contents: "some text"}); err != nil {
			t.Fatal(err)
		}
	}
	if w.made > w.maxJobs || w.maxJobs != 6 {
		t.Errorf("%d blocks allocated for 5000 rows, want ≤ %d (6)", w.made, w.maxJobs)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	dir = t.TempDir()
	w, err = NewWriter(filepath.Join(dir, "docs.zst"), WriterConfig{BlockDocs: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // every write now fails
	var addErr error
	rng := rand.New(rand.NewSource(5))
	noise := make([]byte, 1<<16) // incompressible: fills the 1 MB buffer within 20 rows
	for i := 0; i < 1000 && addErr == nil; i++ {
		rng.Read(noise)
		addErr = w.Add(rlsearch.Document{ID: fmt.Sprint(i), Contents: string(noise)})
	}
	if addErr == nil || !strings.Contains(addErr.Error(), "docstore: write") {
		t.Errorf("Add on a failing file: %v, want a write error", addErr)
	}
	if err := w.Close(); err == nil {
		t.Error("Close on a failing file succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed writer left %d files", len(ents))
	}
}

func TestCheckStopsOnProgressError(t *testing.T) {
	path, _ := build(t, 100, 10)
	s, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop := errors.New("stop")
	calls := 0
	if err := s.Check(func(done, total int) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Check returned %v after %d calls, want stop after 1", err, calls)
	}
}

// TestOpenReadsOnlyTable: Open reads the header, trailer and table only;
// with every block zeroed it still opens (and the damage shows on Doc).
func TestOpenReadsOnlyTable(t *testing.T) {
	path, docs := build(t, 500, 16)
	s, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := s.offsets[0], s.offsets[s.NumBlocks()]
	s.Close()
	b, _ := os.ReadFile(path)
	for i := lo; i < hi; i++ {
		b[i] = 0
	}
	os.WriteFile(path, b, 0o644)
	s, err = Open(path, 0)
	if err != nil {
		t.Fatalf("Open read the blocks: %v", err)
	}
	defer s.Close()
	if s.Len() != len(docs) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(docs))
	}
	if _, err := s.Doc(100); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Doc of a zeroed block: %v, want ErrCorrupt", err)
	}
}
