package integrity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/docstore"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
)

// Path detects what path is, verifies it in full and returns its kind
// ("index", "collection", "N indexes/collections", "docstore", "vector
// file", ...): an index directory (index.Check), a hybrid collection
// (hybrid.CheckIntegrity), the directory of a sharded build (index.CheckShards:
// the manifest and every shard present, "N index shards of one build"), a
// directory holding indexes or collections (each one, in name order), or
// one file recognised by its magic. progress (nil =
// none) receives progress lines. Errors name the file (and, for block
// formats, the block and offset) of the first corruption; a directory
// holding nothing verifiable and a file of unknown kind are errors too.
// Safe for concurrent use on different paths.
func Path(ctx context.Context, path string, progress io.Writer) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return verifyFile(ctx, path, progress)
	}
	if kind := dirKind(path); kind != "" {
		return kind, verifyDir(ctx, path, kind, progress)
	}
	if _, err := os.Stat(filepath.Join(path, index.ManifestFile)); err == nil {
		n, err := index.CheckShards(ctx, path, index.CheckConfig{Progress: progress})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d index shards of one build", n), nil
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return "", err
	}
	var subs []string
	for _, e := range ents {
		if e.IsDir() && dirKind(filepath.Join(path, e.Name())) != "" {
			subs = append(subs, e.Name())
		}
	}
	if len(subs) == 0 {
		return "", fmt.Errorf("%s is not an index (no %s) or a collection (no %s), and holds none", path, index.MetaFile, hybrid.MetaFile)
	}
	sort.Strings(subs)
	for _, s := range subs {
		p := filepath.Join(path, s)
		if progress != nil {
			fmt.Fprintf(progress, "check: %s (%s)\n", p, dirKind(p))
		}
		if err := verifyDir(ctx, p, dirKind(p), progress); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("%d indexes/collections", len(subs)), nil
}

// dirKind is "index", "collection" or "" for a directory.
func dirKind(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, hybrid.MetaFile)); err == nil {
		return "collection"
	}
	if _, err := os.Stat(filepath.Join(dir, index.MetaFile)); err == nil {
		return "index"
	}
	return ""
}

func verifyDir(ctx context.Context, dir, kind string, progress io.Writer) error {
	if kind == "collection" {
		return hybrid.CheckIntegrity(ctx, dir, hybrid.IntegrityConfig{Progress: progress})
	}
	return index.Check(ctx, dir, index.CheckConfig{Progress: progress})
}

// File magics (ann/FORMAT.md, bm25, docstore; SQLite's file header).
const (
	magicShardV2 = "RLSVEC02"
	magicShardV1 = "RLSVEC01"
	magicHNSW    = "RLSHNSW1"
	magicBM25    = "RLSBM25\x00"
	magicDocs    = "RLSDOCS1"
	magicSQLite  = "SQLite format 3\x00"
)

// verifyFile checks one file: first (for a file of a collection) its
// manifest entry, then its own format by its magic.
func verifyFile(ctx context.Context, path string, progress io.Writer) (string, error) {
	listed, err := hybrid.CheckFile(ctx, path)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	head := make([]byte, 16)
	n, _ := io.ReadFull(f, head)
	f.Close()
	head = head[:n]
	has := func(m string) bool { return strings.HasPrefix(string(head), m) }
	var kind string
	switch {
	case has(magicShardV2):
		kind, err = "vector file", verifyShard(ctx, path)
	case has(magicShardV1):
		kind = "vector file (format 1)"
		_, err = ann.ReadVectorFile(path)
	case has(magicHNSW):
		kind = "HNSW graph"
		_, err = ann.LoadHNSW(path)
	case has(magicBM25):
		kind = "BM25 index"
		var ix *bm25.Index
		if ix, err = bm25.Open(path); err == nil {
			err = ix.Check()
			ix.Close()
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
		}
	case has(magicDocs):
		kind = "docstore"
		var s *docstore.Store
		if s, err = docstore.Open(path, 1); err == nil {
			err = s.Check(func(done, total int) error { return ctx.Err() })
			s.Close()
		}
	case has(magicSQLite):
		kind, err = "SQLite database", verifySQLite(ctx, path)
	default:
		// A row map (image.rows, title.rows) has no magic: only the
		// manifest can check it.
		kind = "file"
	}
	if err != nil {
		return "", err
	}
	if listed {
		kind += ", size and CRC-32C match " + hybrid.MetaFile
	} else if kind == "file" {
		return "", fmt.Errorf("%s: not a file rlsearch can check (no known magic, not listed in a collection's %s)", path, hybrid.MetaFile)
	} else if kind == "SQLite database" {
		kind += " (integrity_check only: SQLite does not checksum values; check the collection directory for that)"
	}
	if progress != nil {
		fmt.Fprintf(progress, "check: %s: %s ok\n", path, kind)
	}
	return kind, nil
}

// verifyShard streams a version 2 vector file, checking every block.
func verifyShard(ctx context.Context, path string) error {
	sr, err := ann.OpenVectorFileReader(path)
	if err != nil {
		return err
	}
	defer sr.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, _, err := sr.NextRaw(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// verifySQLite runs PRAGMA integrity_check on a database file, read-only.
func verifySQLite(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("%s: integrity_check: %w", path, err)
	}
	defer rs.Close()
	var msgs []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			return fmt.Errorf("%s: integrity_check: %w", path, err)
		}
		msgs = append(msgs, s)
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("%s: integrity_check: %w", path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return fmt.Errorf("%s: integrity_check: %s", path, strings.Join(msgs, "; "))
	}
	return nil
}
