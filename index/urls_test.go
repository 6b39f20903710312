package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// TestURLs: a corpus whose lines carry "url" (ASearcher's wiki corpus)
// keeps them in urls.zst, by row, empty for the lines without one, in
// whole and sharded builds; `rlsearch verify` checks the file; a corpus
// without urls writes none.
func TestURLs(t *testing.T) {
	ctx := context.Background()
	corpus := writeCorpus(t, `{"id": "a", "title": "A", "text": "first passage"}
{"id": "b", "title": "B", "text": "second passage", "url": "https://example.org/b"}
{"id": "e", "title": "E", "text": "", "url": "https://example.org/skipped"}
{"id": "c", "title": "C", "text": "third passage"}
{"id": "d", "title": "D", "text": "fourth passage", "url": "https://en.wikipedia.org/wiki/D"}
`)
	dir := filepath.Join(t.TempDir(), "ix")
	meta, err := Build(ctx, BuildConfig{Corpus: corpus, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if meta.URLs != URLsFile {
		t.Fatalf("meta.URLs %q", meta.URLs)
	}
	ix, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	want := []string{"", "https://example.org/b", "", "https://en.wikipedia.org/wiki/D"}
	for row, w := range want {
		if got, err := ix.URL(int32(row)); err != nil || got != w {
			t.Errorf("URL(%d) = %q, %v; want %q", row, got, err, w)
		}
	}
	var ids []string
	if err := ix.Scan(func(_ int32, d rlsearch.Document) error { ids = append(ids, d.ID); return nil }); err != nil || len(ids) != 4 || ids[3] != "d" {
		t.Errorf("Scan: %v %v", ids, err)
	}
	if err := Check(ctx, dir, CheckConfig{}); err != nil {
		t.Errorf("Check: %v", err)
	}
	// A truncated urls.zst is caught by Check.
	path := filepath.Join(dir, URLsFile)
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)/2], 0o644)
	if err := Check(ctx, dir, CheckConfig{}); err == nil {
		t.Error("Check passed a truncated urls.zst")
	}

	// Sharded: each shard's urls are its rows'.
	sdir := filepath.Join(t.TempDir(), "sh")
	if _, err := BuildShards(ctx, BuildConfig{Corpus: corpus, Dir: sdir, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	for i, w := range [][]string{want[:2], want[2:]} {
		sx, err := Open(ctx, filepath.Join(sdir, ShardDirName(i, 2)), OpenConfig{})
		if err != nil {
			t.Fatal(err)
		}
		for row, u := range w {
			if got, _ := sx.URL(int32(row)); got != u {
				t.Errorf("shard %d URL(%d) = %q, want %q", i, row, got, u)
			}
		}
		if i == 1 && sx.URLs == nil {
			t.Error("shard 1 has urls but no urls.zst")
		}
		sx.Close()
	}

	plain := filepath.Join(t.TempDir(), "plain")
	if m, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, smallCorpus), Dir: plain}); err != nil || m.URLs != "" {
		t.Fatalf("no urls: meta %+v, %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(plain, URLsFile)); !os.IsNotExist(err) {
		t.Errorf("a corpus without urls wrote %s (%v)", URLsFile, err)
	}
}
