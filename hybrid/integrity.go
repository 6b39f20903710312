package hybrid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
)

// IntegrityConfig configures CheckIntegrity.
type IntegrityConfig struct {
	// Progress receives one line per check ("check: NAME ok (12ms)");
	// nil for none.
	Progress io.Writer
}

// CheckIntegrity checks the collection in dir in full, more deeply than Open:
// collection.json (format, own checksum, schema, manifest entries); the
// size and CRC-32C of every file in the manifest; rows.db with SQLite's
// PRAGMA integrity_check (b-tree structure, index entries against table
// rows, NOT NULL and UNIQUE), its tables' row counts against the manifest
// and _row numbering 0..rows-1; every BM25 index with bm25.Index.Check
// (every postings checksum and invariant) and its document count; every
// vector shard read whole (every block checksum) with its count and
// dimension against collection.json; every row map (length, rows strictly
// increasing and in range). It stops at the first failure; errors name
// the file and wrap ErrCorrupt (ErrRebuild for a format 1 collection).
// It opens nothing for writing and needs no encoder.
func CheckIntegrity(ctx context.Context, dir string, cfg IntegrityConfig) error {
	say := func(name string, start time.Time) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "check: %s ok (%s)\n", name, time.Since(start).Round(time.Millisecond))
		}
	}
	start := time.Now()
	m, err := readMeta(dir)
	if err != nil {
		return err
	}
	say(MetaFile, start)
	start = time.Now()
	if err := m.checkFiles(ctx, dir, func(name string) {
		say(name+" size and CRC-32C", start)
		start = time.Now()
	}); err != nil {
		return err
	}
	start = time.Now()
	if err := verifyDB(ctx, dir, &m); err != nil {
		return err
	}
	say(DBFile+" integrity_check and row counts", start)
	for _, field := range sortedKeys(m.Indexes) {
		if err := ctx.Err(); err != nil {
			return err
		}
		start = time.Now()
		im := m.Indexes[field]
		if err := verifyIndex(dir, &m, im); err != nil {
			return fmt.Errorf("%w: field %s: %w", ErrCorrupt, field, err)
		}
		say(im.File+" contents", start)
	}
	return nil
}

// verifyDB runs PRAGMA integrity_check on rows.db and checks each table's
// row count and _row numbering against the manifest.
func verifyDB(ctx context.Context, dir string, m *Meta) error {
	path := filepath.Join(dir, DBFile)
	db, err := openDB(dir, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	rs, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("%w: %s: integrity_check: %w", ErrCorrupt, path, err)
	}
	var msgs []string
	for rs.Next() {
		var s string
		if err := rs.Scan(&s); err != nil {
			rs.Close()
			return fmt.Errorf("%w: %s: integrity_check: %w", ErrCorrupt, path, err)
		}
		msgs = append(msgs, s)
	}
	err = rs.Err()
	rs.Close()
	if err != nil {
		return fmt.Errorf("%w: %s: integrity_check: %w", ErrCorrupt, path, err)
	}
	if len(msgs) != 1 || msgs[0] != "ok" {
		return fmt.Errorf("%w: %s: integrity_check: %s", ErrCorrupt, path, strings.Join(msgs, "; "))
	}
	for _, t := range sortedKeys(m.Tables) {
		var n, lo, hi int64
		var mn, mx *int64
		err := db.QueryRowContext(ctx, `SELECT count(*), min("_row"), max("_row") FROM "`+strings.ReplaceAll(t, `"`, `""`)+`"`).Scan(&n, &mn, &mx)
		if err != nil {
			return fmt.Errorf("%w: %s: table %s: %w", ErrCorrupt, path, t, err)
		}
		if mn != nil {
			lo, hi = *mn, *mx
		}
		want := int64(m.Tables[t])
		if n != want || (n > 0 && (lo != 0 || hi != n-1)) {
			return fmt.Errorf("%w: %s: table %s has %d rows numbered %d..%d, %s says %d numbered 0..%d", ErrCorrupt, path, t, n, lo, hi, MetaFile, want, want-1)
		}
	}
	return nil
}

// verifyIndex checks one field index file (and its row map) in full.
func verifyIndex(dir string, m *Meta, im IndexMeta) error {
	path := filepath.Join(dir, im.File)
	switch im.Kind {
	case IndexBM25:
		ix, err := bm25.Open(path)
		if err != nil {
			return err
		}
		defer ix.Close()
		if ix.NumDocs() != m.Rows {
			return fmt.Errorf("%s has %d rows, want %d", path, ix.NumDocs(), m.Rows)
		}
		if err := ix.Check(); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	case IndexE5, "vectors":
		flat, err := ann.ReadVectorFile(path)
		if err != nil {
			return err
		}
		if flat.Len() != im.Count || flat.Dim() != im.Dim {
			return fmt.Errorf("%s has %d vectors of dim %d, %s says %d of dim %d", path, flat.Len(), flat.Dim(), MetaFile, im.Count, im.Dim)
		}
		if _, err := readRowMap(filepath.Join(dir, im.Rows), m.Rows, flat.Len()); err != nil {
			return err
		}
		return nil
	}
	return errors.New("unknown index kind " + im.Kind)
}

// CheckFile checks one file of a collection against its manifest: when
// the directory holding path is a collection whose manifest lists the
// file, its size and CRC-32C must match (ok reports that it was listed);
// otherwise it returns false and nil. Errors are those of Open for the
// manifest and the file.
func CheckFile(ctx context.Context, path string) (ok bool, err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil {
		return false, nil
	}
	m, err := readMeta(dir)
	if err != nil {
		return false, err
	}
	s, listed := m.Files[name]
	if !listed {
		return false, nil
	}
	one := Meta{Files: map[string]FileSum{name: s}}
	return true, one.checkFiles(ctx, dir, nil)
}
