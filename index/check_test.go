package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/docstore"
)

// TestVerify builds an index with a vector file, checks that Check passes
// it, then damages one file at a time and checks that Check fails naming
// the file (and, for a block, the block and its offset).
func TestVerify(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "idx")
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, passages(700, "v")), Dir: src, Encoder: hashEncoder{dim: 8, seed: 3}, EncodeBatch: 100}); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := Check(ctx, src, CheckConfig{Progress: &log}); err != nil {
		t.Fatalf("Check of an intact index: %v", err)
	}
	for _, name := range []string{MetaFile, DocsFile, BM25File, DenseFile, "counts"} {
		if !strings.Contains(log.String(), "check: "+name+" ok") {
			t.Errorf("progress lacks %q: %q", name, log.String())
		}
	}
	if !strings.Contains(log.String(), "check: "+FP16RowsFile+" absent") {
		t.Errorf("progress lacks %s absent: %q", FP16RowsFile, log.String())
	}
	// The corpus has no urls: the line says the file is absent, not ok.
	if !strings.Contains(log.String(), "check: "+URLsFile+" absent") || strings.Contains(log.String(), URLsFile+" ok") {
		t.Errorf("progress should say %s absent: %q", URLsFile, log.String())
	}
	// The fp16 rows of a compressed open are checked when present.
	ix, err := Open(ctx, src, OpenConfig{DenseBackend: "hnsw", HNSWCompressed: true})
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	log.Reset()
	if err := Check(ctx, src, CheckConfig{Progress: &log}); err != nil || !strings.Contains(log.String(), "check: "+FP16RowsFile+" ok") {
		t.Fatalf("Check with %s: %v, progress %q", FP16RowsFile, err, log.String())
	}
	st, err := docstore.Open(filepath.Join(src, DocsFile), 0)
	if err != nil {
		t.Fatal(err)
	}
	nb := st.NumBlocks()
	st.Close()
	if nb < 4 {
		t.Fatalf("%d docstore blocks; the test wants at least 4", nb)
	}
	docsOff := docBlockOffset(t, filepath.Join(src, DocsFile), 3)
	for _, tc := range []struct {
		name   string
		damage func(dir string)
		want   []string
	}{
		{"docs block", func(dir string) { flipByte(t, filepath.Join(dir, DocsFile), docsOff+2) },
			[]string{filepath.Join("idx", DocsFile), fmt.Sprintf("block 3 at offset %d", docsOff), "checksum"}},
		{"docs truncated", func(dir string) { truncate(t, filepath.Join(dir, DocsFile), 30) }, []string{DocsFile, "trailer"}},
		{"dense block", func(dir string) { flipByte(t, filepath.Join(dir, DenseFile), -40) }, []string{DenseFile, "block", "offset"}},
		{"dense missing", func(dir string) { os.Remove(filepath.Join(dir, DenseFile)) }, []string{DenseFile, "missing"}},
		{"fp16 rows byte", func(dir string) { flipByte(t, filepath.Join(dir, FP16RowsFile), -3) }, []string{FP16RowsFile, "rows checksum"}},
		{"fp16 rows truncated", func(dir string) { truncate(t, filepath.Join(dir, FP16RowsFile), 2) }, []string{FP16RowsFile, "truncated"}},
		{"bm25", func(dir string) { flipByte(t, filepath.Join(dir, BM25File), 100) }, []string{BM25File}},
		{"meta count", func(dir string) { editMeta(t, dir, `"num_docs": 700`, `"num_docs": 699`) }, []string{"inconsistent", "699 passages", DocsFile + " has 700"}},
		{"meta version", func(dir string) { editMeta(t, dir, `"version": 1`, `"version": 9`) }, []string{MetaFile, "version 9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			copyDir(t, src, dir)
			tc.damage(dir)
			err := Check(ctx, dir, CheckConfig{})
			if err == nil {
				t.Fatal("Check passed a damaged index")
			}
			if !errors.Is(err, ErrCheck) {
				t.Errorf("error %v does not wrap ErrCheck", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if err := Check(ctx, t.TempDir(), CheckConfig{}); err == nil || !strings.Contains(err.Error(), "not an index directory") {
		t.Errorf("Check of an empty directory: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := Check(cctx, src, CheckConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a cancelled context: %v", err)
	}
}

func docBlockOffset(t *testing.T, path string, block int) int64 {
	t.Helper()
	// The table sits before the 20-byte trailer; its first entries are the
	// block offsets (docstore/doc.go).
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tableOff := int64(leU64(b[len(b)-20:]))
	return int64(leU64(b[tableOff+8*int64(block):]))
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// flipByte flips one byte at off (from the end when negative).
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += int64(len(b))
	}
	b[off] ^= 0x20
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncate(t *testing.T, path string, by int64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-by); err != nil {
		t.Fatal(err)
	}
}

func editMeta(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("meta.json lacks %q:\n%s", old, b)
	}
	os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
