package integrity

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/docstore"
)

// TestPath: a docstore is recognised by its magic and verified; one flipped
// byte in its block is reported with the file; unknown files and
// directories holding nothing verifiable are errors. (Indexes and
// collections are covered by cmd/rlsearch's verify tests.)
func TestPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "docs.zst")
	w, err := docstore.Create(p, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := w.Add(rlsearch.Document{ID: id, Contents: "\"T\"\ntext " + id}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if kind, err := Path(ctx, p, nil); err != nil || kind != "docstore" {
		t.Fatalf("Path(docstore) = %q, %v; want docstore, nil", kind, err)
	}
	b, _ := os.ReadFile(p)
	b[30] ^= 1
	os.WriteFile(p, b, 0o644)
	if _, err := Path(ctx, p, nil); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("damaged docstore: %v, want an error naming %s", err, p)
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a stored file"), 0o644)
	if _, err := Path(ctx, junk, nil); err == nil || !strings.Contains(err.Error(), "not a file rlsearch can check") {
		t.Fatalf("unknown file: %v", err)
	}
	if _, err := Path(ctx, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "holds none") {
		t.Fatalf("empty directory: %v", err)
	}
}
