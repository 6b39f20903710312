package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/hybrid"
)

func TestCheckCommand(t *testing.T) {
	dir, _ := buildIndex(t)
	if code, out, errs := runCmd(t, "check", dir); code != 0 || !strings.Contains(out, dir+": ok, index") || !strings.Contains(errs, "check: docs.zst ok") {
		t.Fatalf("verify of an intact index: code %d\n%s\n%s", code, out, errs)
	}
	// Each file of the index alone.
	for file, kind := range map[string]string{"docs.zst": "docstore", "bm25.idx": "BM25 index"} {
		p := filepath.Join(dir, file)
		if code, out, errs := runCmd(t, "check", "--quiet", p); code != 0 || !strings.Contains(out, p+": ok, "+kind) {
			t.Fatalf("verify %s: code %d\n%s\n%s", file, code, out, errs)
		}
	}
	// A directory holding the index.
	if code, out, errs := runCmd(t, "check", "--quiet", filepath.Dir(dir)); code != 0 || !strings.Contains(out, "ok, 1 indexes/collections") {
		t.Fatalf("verify of the index's parent: code %d\n%s\n%s", code, out, errs)
	}
	// One flipped byte in the first (only) docstore block, which starts
	// after the 24-byte header.
	p := filepath.Join(dir, "docs.zst")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[30] ^= 1
	os.WriteFile(p, b, 0o644)
	for _, target := range []string{dir, p} {
		code, out, errs := runCmd(t, "check", "--quiet", target)
		if code != 1 || out != "" || !strings.Contains(errs, p+": block 0 at offset 24 fails its checksum") {
			t.Fatalf("verify %s of a damaged index: code %d, want 1 and a message naming %s, block 0, offset 24\n%s\n%s", target, code, p, out, errs)
		}
	}
	if code, _, errs := runCmd(t, "check"); code != 2 || !strings.Contains(errs, "want one index, collection or file path") {
		t.Fatalf("verify without a path: code %d\n%s", code, errs)
	}
	junk := filepath.Join(t.TempDir(), "junk")
	os.WriteFile(junk, []byte("not a stored file"), 0o644)
	if code, _, errs := runCmd(t, "check", junk); code != 1 || !strings.Contains(errs, junk+": not a file rlsearch can check") {
		t.Fatalf("verify of an unknown file: code %d\n%s", code, errs)
	}
	if code, _, errs := runCmd(t, "check", t.TempDir()); code != 1 || !strings.Contains(errs, "holds none") {
		t.Fatalf("verify of an empty directory: code %d\n%s", code, errs)
	}
}

// TestCheckCollectionCommand: check on a collection, its parent
// directory and its files; one flipped byte inside a value of rows.db
// fails verify (directory or file) and every command that opens the
// collection, naming rows.db (issue 13).
func TestCheckCollectionCommand(t *testing.T) {
	schema, data := writeToys(t)
	tmp := t.TempDir()
	cols := filepath.Join(tmp, "cols")
	col := filepath.Join(cols, "toys")
	if code, out, errs := runCmd(t, "hybrid", "build", "--schema", schema, "--data", data, "--out", col); code != 0 {
		t.Fatalf("build: %d %s %s", code, out, errs)
	}
	db := filepath.Join(col, "rows.db")
	for _, tc := range []struct{ path, want string }{
		{col, col + ": ok, collection"},
		{cols, cols + ": ok, 1 indexes/collections"},
		{db, db + ": ok, SQLite database, size and CRC-32C match collection.json"},
		{filepath.Join(col, "title.bm25"), "ok, BM25 index, size and CRC-32C match collection.json"},
	} {
		if code, out, errs := runCmd(t, "check", tc.path); code != 0 || !strings.Contains(out, tc.want) {
			t.Fatalf("verify %s: code %d, want 0 and %q\n%s\n%s", tc.path, code, tc.want, out, errs)
		}
	}
	if code, _, errs := runCmd(t, "check", col); !strings.Contains(errs, "check: rows.db integrity_check and row counts ok") || code != 0 {
		t.Fatalf("verify progress lines:\n%s", errs)
	}
	// Flip one byte inside the brand value "O'Toys" of one row.
	b, _ := os.ReadFile(db)
	i := bytes.Index(b, []byte("O'Toys"))
	if i < 0 {
		t.Fatal("no O'Toys in rows.db")
	}
	b[i+2] ^= 1
	os.WriteFile(db, b, 0o644)
	for _, target := range []string{col, cols, db} {
		code, out, errs := runCmd(t, "check", "--quiet", target)
		if code != 1 || out != "" || !strings.Contains(errs, db+": CRC-32C") {
			t.Fatalf("verify %s of a damaged collection: code %d, want 1 naming %s\n%s\n%s", target, code, db, out, errs)
		}
	}
	// serve --collections: startup fails naming the file.
	if _, err := hybrid.OpenCollections(context.Background(), cols, hybrid.OpenConfig{}); err == nil || !strings.Contains(err.Error(), db+": CRC-32C") {
		t.Fatalf("openCollections on a damaged collection: %v, want an error naming %s", err, db)
	}
	progs := filepath.Join(tmp, "progs.jsonl")
	os.WriteFile(progs, []byte(`{"sql": "WHERE brand = 'Acme'", "retrieval_list": []}`+"\n"), 0o644)
	if code, out, errs := runCmd(t, "hybrid", "exec", "--collection", col, "--in", progs); code == 0 || !strings.Contains(errs, db) {
		t.Fatalf("exec on a damaged collection: code %d, want a failure naming %s\n%s\n%s", code, db, out, errs)
	}
}

// TestVerifyShardCommand: a vector file (dense.shard) alone, intact and with one
// flipped byte.
func TestVerifyShardCommand(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dense.shard")
	w, err := ann.CreateVectorFile(p, ann.Header{DType: ann.FP16, Dim: 8, EncoderID: "test"})
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([]float32, 8*300)
	for i := range vecs {
		vecs[i] = float32(i%17) / 17
	}
	if err := w.Append(vecs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runCmd(t, "check", p); code != 0 || !strings.Contains(out, p+": ok, vector file") {
		t.Fatalf("verify of an intact shard: code %d\n%s\n%s", code, out, errs)
	}
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 1
	os.WriteFile(p, b, 0o644)
	if code, out, errs := runCmd(t, "check", p); code != 1 || !strings.Contains(errs, p) || !strings.Contains(errs, "corrupt") {
		t.Fatalf("verify of a damaged shard: code %d, want 1 naming %s\n%s\n%s", code, p, out, errs)
	}
}

// TestVerifyDeprecated: `rlsearch verify` (the old name of check, kept for
// one release) still checks, after one deprecation line on stderr.
func TestVerifyDeprecated(t *testing.T) {
	dir, _ := buildIndex(t)
	const line = `rlsearch: "verify" is deprecated, use "check"` + "\n"
	code, out, errs := runCmd(t, "verify", "--quiet", dir)
	if code != 0 || !strings.Contains(out, dir+": ok, index") || errs != line {
		t.Fatalf("verify (deprecated): code %d, stdout %q, stderr %q; want 0, ok and exactly the line %q", code, out, errs, line)
	}
	code, out, errs = runCmd(t, "check", "--quiet", dir)
	if code != 0 || !strings.Contains(out, dir+": ok, index") || strings.Contains(errs, "deprecated") {
		t.Fatalf("check: code %d, stdout %q, stderr %q; want 0, ok and no deprecation", code, out, errs)
	}
}
