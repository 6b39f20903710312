package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CollectionFormat is the collection format this binary writes and reads. Format 2
// added the manifest (Meta.Files, Meta.Tables, Meta.Checksum); format 1
// collections carry no checksums and are refused with ErrRebuild.
const CollectionFormat = 2

var (
	// ErrCorrupt is wrapped by every error that reports a damaged,
	// truncated, missing, replaced or inconsistent file of a collection
	// (as opposed to one that could not be read at all, e.g. permissions).
	ErrCorrupt = errors.New("hybrid: collection damaged")
	// ErrRebuild is wrapped by the error for a collection built before
	// collections carried a manifest (format 1): it cannot be checked and
	// must be rebuilt with Build (`rlsearch hybrid build`).
	ErrRebuild = errors.New("hybrid: collection must be rebuilt")
)

// FileSum is the manifest entry of one file: its exact size in bytes and
// the CRC-32C (Castagnoli, as the index files use) of all its bytes, as 8
// lowercase hex digits.
type FileSum struct {
	Size   int64  `json:"size"`
	CRC32C string `json:"crc32c"`
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Tables of rows.db whose row counts the manifest records.
var dbTables = []string{"rows", "texts"}

// sumFile reads the whole file once and returns its size and CRC-32C.
// ctx is checked every 4 MiB.
func sumFile(ctx context.Context, path string) (FileSum, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	buf := make([]byte, 4<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return FileSum{}, err
		}
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return FileSum{}, err
		}
	}
	return FileSum{Size: n, CRC32C: fmt.Sprintf("%08x", h.Sum32())}, nil
}

// metaChecksum is the CRC-32C of m's compact JSON encoding with Checksum
// empty. It is computed over the decoded value, not the file's bytes, so
// what is checked is exactly what Open uses (whitespace and unknown keys,
// which Open ignores, are not covered; they cannot change behaviour).
func metaChecksum(m Meta) (string, error) {
	m.Checksum = ""
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%08x", crc32.Checksum(raw, castagnoli)), nil
}

// seal records the manifest of the collection files in dir into m: the
// size and CRC-32C of every regular file except collection.json, the row
// count of every table of rows.db, and m's own checksum. Called by Build
// after every other file is written and synced.
func (m *Meta) seal(ctx context.Context, dir string, rows int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	m.Files = map[string]FileSum{}
	for _, e := range ents {
		if e.Name() == MetaFile || !e.Type().IsRegular() {
			continue
		}
		s, err := sumFile(ctx, filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		m.Files[e.Name()] = s
	}
	m.Tables = map[string]int{}
	for _, t := range dbTables {
		m.Tables[t] = rows
	}
	m.Checksum, err = metaChecksum(*m)
	return err
}

// readMeta reads and checks collection.json of dir: it parses, has format
// CollectionFormat (format 1 fails with ErrRebuild), its checksum matches, its
// schema validates, and every file it refers to has a manifest entry with
// a plain file name. Errors name the file.
func readMeta(dir string) (Meta, error) {
	var m Meta
	path := filepath.Join(dir, MetaFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("hybrid: %s is not a collection (no %s): %w", dir, MetaFile, err)
	} else if err != nil {
		return m, fmt.Errorf("hybrid: %w", err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if m.Format == 1 {
		return m, fmt.Errorf("%w: %s: format 1 collection (built before collections carried a manifest of file checksums); rebuild it with `rlsearch hybrid build` (or hybrid.Build)", ErrRebuild, path)
	}
	if m.Format != CollectionFormat {
		return m, fmt.Errorf("%w: %s: format %d, this binary reads %d", ErrCorrupt, path, m.Format, CollectionFormat)
	}
	want, err := metaChecksum(m)
	if err != nil {
		return m, err
	}
	if m.Checksum != want {
		return m, fmt.Errorf("%w: %s: checksum %q, contents give %q (the file was edited or damaged; rebuild the collection)", ErrCorrupt, path, m.Checksum, want)
	}
	if m.Schema == nil {
		return m, fmt.Errorf("%w: %s: no schema", ErrCorrupt, path)
	}
	if err := m.Schema.Validate(); err != nil {
		return m, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	for name := range m.Files {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || name == MetaFile {
			return m, fmt.Errorf("%w: %s: bad file name %q in the manifest", ErrCorrupt, path, name)
		}
	}
	need := []string{DBFile}
	for _, im := range m.Indexes {
		need = append(need, im.File)
		if im.Rows != "" {
			need = append(need, im.Rows)
		}
	}
	for _, name := range need {
		if _, ok := m.Files[name]; !ok {
			return m, fmt.Errorf("%w: %s: %q has no manifest entry", ErrCorrupt, path, name)
		}
	}
	for _, t := range dbTables {
		if n, ok := m.Tables[t]; !ok || n != m.Rows {
			return m, fmt.Errorf("%w: %s: table %s has %d rows in the manifest, want %d", ErrCorrupt, path, t, n, m.Rows)
		}
	}
	return m, nil
}

// checkFiles reads every file of the manifest once and compares its size
// and CRC-32C; the first mismatch fails naming the file. progress, when
// not nil, is called after each file.
func (m *Meta) checkFiles(ctx context.Context, dir string, progress func(name string)) error {
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := m.Files[name]
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s is missing (listed in %s)", ErrCorrupt, path, MetaFile)
		} else if err != nil {
			return fmt.Errorf("hybrid: %w", err)
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrCorrupt, path)
		}
		if fi.Size() != want.Size {
			return fmt.Errorf("%w: %s has %d bytes, %s says %d (truncated, extended or replaced)", ErrCorrupt, path, fi.Size(), MetaFile, want.Size)
		}
		got, err := sumFile(ctx, path)
		if err != nil {
			return fmt.Errorf("hybrid: %w", err)
		}
		if got != want {
			return fmt.Errorf("%w: %s: CRC-32C %s, %s says %s (damaged or replaced)", ErrCorrupt, path, got.CRC32C, MetaFile, want.CRC32C)
		}
		if progress != nil {
			progress(name)
		}
	}
	return nil
}

// syncFile flushes a written file to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	return errors.Join(err, f.Close())
}

// writeFileSync writes data to path and syncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}
