package hybrid

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

var (
	colMu   sync.Mutex
	colDirs = map[string]string{}
	colOpen = map[string]*Collection{}
	tmpRoot string
)

func TestMain(m *testing.M) {
	code := m.Run()
	colMu.Lock()
	for _, c := range colOpen {
		c.Close()
	}
	if tmpRoot != "" {
		os.RemoveAll(tmpRoot)
	}
	colMu.Unlock()
	os.Exit(code)
}

var dataFiles = map[string]string{
	"amazon_toys":  "amazon_toys/products.jsonl",
	"enron_emails": "enron_emails/emails.jsonl",
}

// shipped builds (once per test binary) and opens the shipped collection
// over the real data with BM25 text indexes.
func shipped(tb testing.TB, name string) *Collection {
	tb.Helper()
	data := filepath.Join(testutil.DataDir(tb), dataFiles[name])
	colMu.Lock()
	defer colMu.Unlock()
	if c, ok := colOpen[name]; ok {
		return c
	}
	if tmpRoot == "" {
		d, err := os.MkdirTemp("", "rlsearch-hybrid-")
		if err != nil {
			tb.Fatal(err)
		}
		tmpRoot = d
	}
	s, err := BuiltinSchema(name)
	if err != nil {
		tb.Fatal(err)
	}
	dir := filepath.Join(tmpRoot, name)
	ctx := context.Background()
	if _, err := Build(ctx, BuildConfig{Schema: s, Data: data, Dir: dir}); err != nil {
		tb.Fatalf("build %s: %v", name, err)
	}
	c, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		tb.Fatalf("open %s: %v", name, err)
	}
	colDirs[name], colOpen[name] = dir, c
	return c
}
