package hybrid

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// copyDir copies the regular files of a collection directory into a fresh
// temporary directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// rawDB opens a database file with plain SQLite, read-only, with none of
// the collection's checks: what serving saw before collections had a
// manifest.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	abs, _ := filepath.Abs(path)
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func pragma(t *testing.T, db *sql.DB, p string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(`PRAGMA ` + p).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// flipAfter flips the low bit of the byte in the middle of the first
// occurrence of value that follows the first occurrence of anchor within
// 400 bytes (anchor "" = the first occurrence of value) and returns its
// offset.
func flipAfter(t *testing.T, path, anchor, value string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := bytes.Index(b, []byte(anchor))
	if a < 0 {
		t.Fatalf("%q not in %s", anchor, path)
	}
	end := len(b)
	if anchor != "" {
		end = min(a+400, len(b))
	}
	i := bytes.Index(b[a:end], []byte(value))
	if i < 0 {
		t.Fatalf("%q not within 400 bytes after %q in %s", value, anchor, path)
	}
	off := a + i + len(value)/2
	b[off] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return off
}

// wantDamage asserts that Open and CheckIntegrity both fail on dir with an error
// wrapping want and naming file (a path under dir, or the message part).
func wantDamage(t *testing.T, dir string, want error, file, msg string) {
	t.Helper()
	ctx := context.Background()
	c, err := Open(ctx, dir, OpenConfig{})
	if err == nil {
		c.Close()
		t.Fatalf("Open of a damaged collection succeeded (want an error naming %s)", file)
	}
	path := filepath.Join(dir, file)
	if !errors.Is(err, want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("Open: %v\nwant an error wrapping %q naming %s with %q", err, want, path, msg)
	}
	var out bytes.Buffer
	err = CheckIntegrity(ctx, dir, IntegrityConfig{Progress: &out})
	if !errors.Is(err, want) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("CheckIntegrity: %v\nwant an error wrapping %q naming %s with %q\n%s", err, want, path, msg, out.String())
	}
}

// TestFlippedValueInRowsDB is the regression test of issue 13: one byte
// flipped inside a value of rows.db used to open and serve wrong rows.
// SQLite's quick_check passes it (SQLite does not checksum values), so
// only the manifest's content checksum can catch it.
func TestFlippedValueInRowsDB(t *testing.T) {
	src := shipped(t, "amazon_toys")
	var id string
	var row int64
	if err := src.db.QueryRow(`SELECT "product_id", "_row" FROM "rows" WHERE "top_category" = 'Hobbies' ORDER BY "_row" LIMIT 1 OFFSET 100`).Scan(&id, &row); err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, src.Dir)
	db := filepath.Join(dir, DBFile)
	flipAfter(t, db, id, "Hobbies")
	raw := rawDB(t, db)
	var got string
	if err := raw.QueryRow(`SELECT "top_category" FROM "rows" WHERE "_row" = ?`, row).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got == "Hobbies" {
		t.Fatalf("the flip did not change row %d's value", row)
	}
	if s := pragma(t, raw, "quick_check"); s != "ok" {
		t.Fatalf("quick_check %q: the test no longer shows a flip SQLite's cheap check misses", s)
	}
	wantDamage(t, dir, ErrCorrupt, DBFile, "CRC-32C")
}

// TestCollectionDamage: each kind of damage to a stored collection fails
// Open and CheckIntegrity with an error naming the file.
func TestCollectionDamage(t *testing.T) {
	amazon := shipped(t, "amazon_toys")
	enron := shipped(t, "enron_emails")
	var title string
	if err := amazon.db.QueryRow(`SELECT "title" FROM "texts" WHERE "_row" = 777`).Scan(&title); err != nil {
		t.Fatal(err)
	}
	editMeta := func(t *testing.T, dir string, fn func(m map[string]any)) {
		p := filepath.Join(dir, MetaFile)
		raw, _ := os.ReadFile(p)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		fn(m)
		raw, _ = json.MarshalIndent(m, "", "  ")
		os.WriteFile(p, raw, 0o644)
	}
	for _, tc := range []struct {
		name      string
		damage    func(t *testing.T, dir string)
		want      error
		file, msg string
	}{
		{"flipped byte in a text value (integrity_check passes)", func(t *testing.T, dir string) {
			flipAfter(t, filepath.Join(dir, DBFile), "", title)
			if s := pragma(t, rawDB(t, filepath.Join(dir, DBFile)), "integrity_check"); s != "ok" {
				t.Fatalf("integrity_check %q: the test no longer shows a flip SQLite's full check misses", s)
			}
		}, ErrCorrupt, DBFile, "CRC-32C"},
		{"rows.db truncated by one page", func(t *testing.T, dir string) {
			p := filepath.Join(dir, DBFile)
			fi, _ := os.Stat(p)
			os.Truncate(p, fi.Size()-4096)
		}, ErrCorrupt, DBFile, "bytes"},
		{"rows.db extended", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, DBFile), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(make([]byte, 4096))
			f.Close()
		}, ErrCorrupt, DBFile, "bytes"},
		{"rows.db swapped in from another collection", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(enron.Dir, DBFile))
			os.WriteFile(filepath.Join(dir, DBFile), b, 0o644)
		}, ErrCorrupt, DBFile, ""},
		{"rows.db missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, DBFile))
		}, ErrCorrupt, DBFile, "missing"},
		{"flipped byte in a BM25 index", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "reviews.bm25")
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 0x10
			os.WriteFile(p, b, 0o644)
		}, ErrCorrupt, "reviews.bm25", "CRC-32C"},
		{"BM25 index missing", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "title.bm25"))
		}, ErrCorrupt, "title.bm25", "missing"},
		{"manifest: row count edited", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) { m["rows"] = 9999.0 })
		}, ErrCorrupt, MetaFile, "checksum"},
		{"manifest: checksum of rows.db edited to match a flipped rows.db", func(t *testing.T, dir string) {
			flipAfter(t, filepath.Join(dir, DBFile), "", title)
			s, err := sumFile(context.Background(), filepath.Join(dir, DBFile))
			if err != nil {
				t.Fatal(err)
			}
			editMeta(t, dir, func(m map[string]any) {
				m["files"].(map[string]any)[DBFile].(map[string]any)["crc32c"] = s.CRC32C
			})
		}, ErrCorrupt, MetaFile, "checksum"},
		{"manifest: one byte of the JSON flipped", func(t *testing.T, dir string) {
			flipAfter(t, filepath.Join(dir, MetaFile), `"brand"`, "TEXT")
		}, ErrCorrupt, MetaFile, "checksum"},
		{"manifest: not JSON", func(t *testing.T, dir string) {
			os.Truncate(filepath.Join(dir, MetaFile), 100)
		}, ErrCorrupt, MetaFile, ""},
		{"format 1 collection (before manifests)", func(t *testing.T, dir string) {
			editMeta(t, dir, func(m map[string]any) {
				m["format"] = 1.0
				delete(m, "files")
				delete(m, "tables")
				delete(m, "checksum")
			})
		}, ErrRebuild, MetaFile, "rebuild"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, amazon.Dir)
			tc.damage(t, dir)
			wantDamage(t, dir, tc.want, tc.file, tc.msg)
		})
	}
}

// imageCollection builds a 200-row collection with a user-vector image
// field (files image.vec and image.rows).
func imageCollection(t *testing.T) string {
	t.Helper()
	data := filepath.Join(testutil.DataDir(t), dataFiles["amazon_toys"])
	s := amazonSchema(t)
	s.Text = s.Text[:1]
	s.Image = []ImageField{{Name: "image"}}
	tmp := t.TempDir()
	rows, err := readRows(s, data, 200)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rng := rand.New(rand.NewPCG(3, 4))
	for i, r := range rows {
		if i%4 != 0 {
			fmt.Fprintf(&b, `{"id": %q, "vector": [%g, %g, %g, %g]}`+"\n", r.id, rng.Float32(), rng.Float32(), rng.Float32(), rng.Float32())
		}
	}
	vf := filepath.Join(tmp, "vec.jsonl")
	os.WriteFile(vf, b.Bytes(), 0o644)
	dir := filepath.Join(tmp, "c")
	if _, err := Build(context.Background(), BuildConfig{Schema: s, Data: data, Dir: dir, Limit: 200, ImageVectors: map[string]string{"image": vf}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestVectorFileDamage: the vector shard and the row map of a vector
// index are checked like rows.db.
func TestVectorFileDamage(t *testing.T) {
	src := imageCollection(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := CheckIntegrity(ctx, src, IntegrityConfig{Progress: &out}); err != nil {
		t.Fatalf("CheckIntegrity of an intact collection: %v\n%s", err, out.String())
	}
	for _, name := range []string{MetaFile, DBFile, "title.bm25", "image.vec", "image.rows"} {
		if !strings.Contains(out.String(), "check: "+name) {
			t.Errorf("CheckIntegrity output does not mention %s:\n%s", name, out.String())
		}
	}
	for _, tc := range []struct {
		name, file string
		damage     func(b []byte) []byte
		msg        string
	}{
		{"flipped byte in the vector shard", "image.vec", func(b []byte) []byte { b[len(b)-40] ^= 4; return b }, "CRC-32C"},
		{"row map entry changed", "image.rows", func(b []byte) []byte { b[8]++; return b }, "CRC-32C"},
		{"row map truncated", "image.rows", func(b []byte) []byte { return b[:len(b)-4] }, "bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t, src)
			p := filepath.Join(dir, tc.file)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, tc.damage(b), 0o644)
			wantDamage(t, dir, ErrCorrupt, tc.file, tc.msg)
		})
	}
}

// TestVerifyDeeperThanOpen: damage that the manifest was (wrongly) sealed
// over — as a buggy writer would produce — passes Open's checksum check
// but not CheckIntegrity's integrity_check.
func TestVerifyDeeperThanOpen(t *testing.T) {
	src := shipped(t, "amazon_toys")
	var id string
	if err := src.db.QueryRow(`SELECT "product_id" FROM "rows" WHERE "top_category" = 'Hobbies' ORDER BY "_row" LIMIT 1 OFFSET 100`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	dir := copyDir(t, src.Dir)
	flipAfter(t, filepath.Join(dir, DBFile), id, "Hobbies")
	m := src.Meta
	if err := m.seal(context.Background(), dir, m.Rows); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.MarshalIndent(m, "", "  ")
	os.WriteFile(filepath.Join(dir, MetaFile), raw, 0o644)
	c, err := Open(context.Background(), dir, OpenConfig{})
	if err != nil {
		t.Fatalf("Open after resealing: %v", err)
	}
	c.Close()
	err = CheckIntegrity(context.Background(), dir, IntegrityConfig{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join(dir, DBFile)) || !strings.Contains(err.Error(), "missing from index") {
		t.Fatalf("CheckIntegrity: %v, want integrity_check's report naming %s", err, DBFile)
	}
}

// TestManifestRoundTrip: a built collection's manifest lists every file
// with its true size and checksum, both row tables, and its own checksum.
func TestManifestRoundTrip(t *testing.T) {
	c := shipped(t, "enron_emails")
	m, err := readMeta(c.Dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(c.Dir)
	if len(m.Files) != len(ents)-1 {
		t.Fatalf("manifest lists %d files, directory holds %d besides %s", len(m.Files), len(ents)-1, MetaFile)
	}
	for _, e := range ents {
		if e.Name() == MetaFile {
			continue
		}
		s, err := sumFile(context.Background(), filepath.Join(c.Dir, e.Name()))
		if err != nil || s != m.Files[e.Name()] {
			t.Errorf("%s: %+v %v, manifest %+v", e.Name(), s, err, m.Files[e.Name()])
		}
	}
	if m.Tables["rows"] != c.Len() || m.Tables["texts"] != c.Len() || m.Format != CollectionFormat {
		t.Fatalf("tables %v format %d, want %d rows, format %d", m.Tables, m.Format, c.Len(), CollectionFormat)
	}
	if err := CheckIntegrity(context.Background(), c.Dir, IntegrityConfig{}); err != nil {
		t.Fatal(err)
	}
}

// TestRandomFlips: property over random single-byte damage to every file
// of a collection with BM25, vector and row-map files. CRC-32C detects
// every error burst of at most 32 bits, so any changed byte of a data file
// must fail Open with ErrCorrupt naming that file; a changed byte of
// collection.json must fail Open, or leave the decoded manifest exactly as
// it was (JSON whitespace and key case do not change what Open uses).
func TestRandomFlips(t *testing.T) {
	src := imageCollection(t)
	ctx := context.Background()
	orig, err := readMeta(src)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{MetaFile}
	for name := range orig.Files {
		names = append(names, name)
	}
	rng := rand.New(rand.NewPCG(13, 5))
	dir := copyDir(t, src)
	const trials = 150
	for i := range trials {
		name := names[i%len(names)]
		p := filepath.Join(dir, name)
		good, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b := bytes.Clone(good)
		off := rng.IntN(len(b))
		b[off] ^= byte(1 + rng.IntN(255))
		os.WriteFile(p, b, 0o644)
		c, err := Open(ctx, dir, OpenConfig{})
		switch {
		case name != MetaFile && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p)):
			t.Fatalf("%s byte %d changed: Open: %v, want ErrCorrupt naming %s", name, off, err, p)
		case name == MetaFile && err == nil:
			a, _ := json.Marshal(orig)
			z, _ := json.Marshal(c.Meta)
			if !bytes.Equal(a, z) {
				t.Fatalf("collection.json byte %d changed (%q -> %q): Open succeeded with a different manifest", off, good[off], b[off])
			}
		case name == MetaFile && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrRebuild):
			t.Fatalf("collection.json byte %d changed: Open: %v, want ErrCorrupt", off, err)
		}
		if c != nil {
			c.Close()
		}
		os.WriteFile(p, good, 0o644)
	}
}

// FuzzReadMeta: any collection.json is refused with an error or accepted
// only with a self-consistent manifest; never a panic.
func FuzzReadMeta(f *testing.F) {
	f.Add([]byte(`{"format": 1}`))
	f.Add([]byte(`{"format": 2, "checksum": "00000000"}`))
	f.Add([]byte(`{"format": 2, "schema": {"name": "t", "id": "id", "columns": [], "text": []}, "rows": 1, "files": {"rows.db": {"size": 1, "crc32c": "00000000"}}, "tables": {"rows": 1, "texts": 1}, "checksum": "x"}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, raw []byte) {
		if err := os.WriteFile(filepath.Join(dir, MetaFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := readMeta(dir)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrRebuild) {
				t.Fatalf("error wraps neither ErrCorrupt nor ErrRebuild: %v", err)
			}
			return
		}
		if sum, _ := metaChecksum(m); sum != m.Checksum || m.Format != CollectionFormat {
			t.Fatalf("accepted a manifest with checksum %q (contents give %q), format %d", m.Checksum, sum, m.Format)
		}
	})
}
