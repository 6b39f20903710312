package hybrid

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/internal/decompress"
)

// Files of a collection directory.
const (
	MetaFile = "collection.json" // Meta: schema, row count, index descriptions
	DBFile   = "rows.db"         // SQLite: table rows (_row, id, columns), table texts (_row, text fields)
)

// Meta is collection.json. Files, Tables and Checksum are the manifest
// (format 2): Open and CheckIntegrity check every file against it (see readMeta,
// checkFiles and CheckIntegrity).
type Meta struct {
	Format  int                  `json:"format"` // CollectionFormat (2)
	Schema  *Schema              `json:"schema"`
	Rows    int                  `json:"rows"`
	Created string               `json:"created"`
	Indexes map[string]IndexMeta `json:"indexes"` // by field name
	// Files has the size and CRC-32C of every file of the collection
	// except collection.json, by file name.
	Files map[string]FileSum `json:"files"`
	// Tables has the row count of every table of rows.db ("rows", "texts").
	Tables map[string]int `json:"tables"`
	// Checksum is the CRC-32C (8 hex digits) of this Meta's compact JSON
	// encoding with Checksum "" (see metaChecksum).
	Checksum string `json:"checksum"`
}

// IndexMeta describes the index of one text or image field.
type IndexMeta struct {
	Kind    string `json:"kind"`              // "bm25", "e5" or "vectors"
	File    string `json:"file"`              // bm25 file or ann shard
	Rows    string `json:"rows,omitempty"`    // shard row -> collection row map (uint32 LE), vector indexes
	Encoder string `json:"encoder,omitempty"` // e5: encoder name the shard was built with
	Count   int    `json:"count"`             // indexed rows
	Dim     int    `json:"dim,omitempty"`
}

// BuildConfig configures Build.
type BuildConfig struct {
	// Schema of the collection (required); its Validate must pass.
	Schema *Schema
	// Data is the JSONL file of rows (required); each line one JSON
	// object. Plain, gzip or zstd (package internal/decompress), as are
	// the ImageVectors files.
	Data string
	// Dir is the output directory (required). It is written atomically: a
	// temporary sibling renamed at the end; an existing collection there is
	// replaced, any other existing path is an error.
	Dir string
	// Encoder embeds passages of text fields whose index is "e5"; required
	// only when the schema has such fields.
	Encoder rlsearch.Encoder
	// ImageVectors maps an image field to a JSONL file of
	// {"id": row id, "vector": [float, ...]} (one dimension for all).
	// Rows without a vector are never retrieved for that field.
	ImageVectors map[string]string
	// Limit keeps only the first Limit rows (0 = all); for small test collections.
	Limit int
	// EncodeBatch is the number of passages per Encoder call (0 = 64).
	EncodeBatch int
}

// Validate names the first bad field.
func (c BuildConfig) Validate() error {
	switch {
	case c.Schema == nil:
		return errors.New("hybrid: BuildConfig.Schema is required")
	case c.Data == "":
		return errors.New("hybrid: BuildConfig.Data is required")
	case c.Dir == "":
		return errors.New("hybrid: BuildConfig.Dir is required")
	case c.Limit < 0:
		return fmt.Errorf("hybrid: BuildConfig.Limit %d must be >= 0", c.Limit)
	case c.EncodeBatch < 0:
		return fmt.Errorf("hybrid: BuildConfig.EncodeBatch %d must be >= 0", c.EncodeBatch)
	}
	if err := c.Schema.Validate(); err != nil {
		return fmt.Errorf("hybrid: BuildConfig.Schema: %w", err)
	}
	for _, f := range c.Schema.Text {
		if f.index() == IndexE5 && c.Encoder == nil {
			return fmt.Errorf("hybrid: BuildConfig.Encoder is required: text field %s uses e5", f.Name)
		}
	}
	for name := range c.ImageVectors {
		if _, ok := c.Schema.imageField(name); !ok {
			return fmt.Errorf("hybrid: BuildConfig.ImageVectors: %q is not an image field", name)
		}
	}
	return nil
}

// rowData is one decoded row.
type rowData struct {
	id    string
	cells []cell   // per Schema.Columns
	texts []string // per Schema.Text
}

// readRows decodes the JSONL data file according to the schema.
func readRows(s *Schema, path string, limit int) ([]rowData, error) {
	f, err := decompress.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	defer f.Close()
	idPath, _ := parsePath(s.idSource())
	colPaths := make([][]pathStep, len(s.Columns))
	for i, c := range s.Columns {
		colPaths[i], _ = parsePath(c.source())
	}
	textPaths := make([][][]pathStep, len(s.Text))
	for i, t := range s.Text {
		for _, p := range t.sources() {
			st, _ := parsePath(p)
			textPaths[i] = append(textPaths[i], st)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	seen := map[string]int{}
	var rows []rowData
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("hybrid: %s line %d: %v", path, line, err)
		}
		ids := extract(v, idPath)
		if len(ids) != 1 {
			return nil, fmt.Errorf("hybrid: %s line %d: id %s missing", path, line, s.idSource())
		}
		id, ok := scalarText(ids[0])
		if !ok || id == "" {
			return nil, fmt.Errorf("hybrid: %s line %d: id is not a string or number", path, line)
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("hybrid: %s line %d: duplicate id %q (first on line %d)", path, line, id, prev)
		}
		seen[id] = line
		r := rowData{id: id, cells: make([]cell, len(s.Columns)), texts: make([]string, len(s.Text))}
		for i, c := range s.Columns {
			r.cells[i] = toCell(c.Type, extract(v, colPaths[i]))
		}
		for i := range s.Text {
			var parts []string
			for _, st := range textPaths[i] {
				for _, x := range extract(v, st) {
					if t, ok := scalarText(x); ok && strings.TrimSpace(t) != "" {
						parts = append(parts, t)
					}
				}
			}
			r.texts[i] = strings.Join(parts, "\n")
		}
		rows = append(rows, r)
		if limit > 0 && len(rows) == limit {
			break
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hybrid: %s line %d: %w", path, line+1, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("hybrid: %s has no rows", path)
	}
	if len(rows) > math.MaxInt32 {
		return nil, fmt.Errorf("hybrid: %s has too many rows", path)
	}
	return rows, nil
}

// toCell converts extracted JSON values to a column value (see parsePath).
func toCell(typ string, vals []any) cell {
	if len(vals) == 0 {
		return cell{}
	}
	if typ == TypeText {
		var parts []string
		for _, v := range vals {
			if t, ok := scalarText(v); ok && t != "" {
				parts = append(parts, t)
			}
		}
		if len(parts) == 0 {
			return cell{}
		}
		return cell{Kind: ValString, S: strings.Join(parts, ", ")}
	}
	var f float64
	switch x := vals[0].(type) {
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return cell{}
		}
		if typ == TypeInteger {
			if i, err := x.Int64(); err == nil {
				return cell{Kind: ValInt, I: i}
			}
		}
	case bool:
		if x {
			f = 1
		}
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil {
			return cell{}
		}
	default:
		return cell{}
	}
	if !finite(f) {
		return cell{}
	}
	if typ == TypeInteger {
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return cell{}
		}
		return cell{Kind: ValInt, I: int64(f)}
	}
	return cell{Kind: ValReal, F: f}
}

// Build reads cfg.Data, writes the rows into SQLite, builds one index per
// text field (BM25, or E5 vectors through cfg.Encoder) and one vector index
// per image field with vectors, syncs them, and writes collection.json last
// with the manifest: size and CRC-32C of every file and the row count of
// every table (see Meta). Everything is written into a temporary sibling
// directory that replaces Dir by rename, so a reader opening Dir finds the
// old collection, the new one or (between two renames) none, never a mix;
// a crash between the renames leaves the old one at Dir.old-*/c. Not safe to run twice on one Dir at
// the same time.
func Build(ctx context.Context, cfg BuildConfig) (*Meta, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := cfg.Schema
	rows, err := readRows(s, cfg.Data, cfg.Limit)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(cfg.Dir); err == nil {
		if !fi.IsDir() {
			return nil, fmt.Errorf("hybrid: %s exists and is not a directory", cfg.Dir)
		}
		if _, err := os.Stat(filepath.Join(cfg.Dir, MetaFile)); err != nil {
			if ents, _ := os.ReadDir(cfg.Dir); len(ents) > 0 {
				return nil, fmt.Errorf("hybrid: %s exists and is not a collection; refusing to replace it", cfg.Dir)
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Clean(cfg.Dir)), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(cfg.Dir)), filepath.Base(cfg.Dir)+".tmp-*")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	meta := &Meta{Format: CollectionFormat, Schema: s, Rows: len(rows), Created: time.Now().UTC().Format(time.RFC3339), Indexes: map[string]IndexMeta{}}
	if err := writeDB(ctx, filepath.Join(tmp, DBFile), s, rows); err != nil {
		return nil, err
	}
	for i, f := range s.Text {
		im, err := buildTextIndex(ctx, cfg, tmp, i, f, rows)
		if err != nil {
			return nil, fmt.Errorf("hybrid: text field %s: %w", f.Name, err)
		}
		meta.Indexes[f.Name] = im
	}
	for _, f := range s.Image {
		path, ok := cfg.ImageVectors[f.Name]
		if !ok {
			continue
		}
		im, err := buildImageIndex(tmp, f, path, rows)
		if err != nil {
			return nil, fmt.Errorf("hybrid: image field %s: %w", f.Name, err)
		}
		meta.Indexes[f.Name] = im
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if err := syncFile(filepath.Join(tmp, e.Name())); err != nil {
			return nil, err
		}
	}
	if err := meta.seal(ctx, tmp, len(rows)); err != nil {
		return nil, err
	}
	raw, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileSync(filepath.Join(tmp, MetaFile), append(raw, '\n')); err != nil {
		return nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it 0700
		return nil, err
	}
	if err := syncFile(tmp); err != nil {
		return nil, err
	}
	if err := replaceDir(tmp, cfg.Dir); err != nil {
		return nil, err
	}
	ok = true
	return meta, nil
}

func sqlType(t string) string { return t }

func writeDB(ctx context.Context, path string, s *Schema, rows []rowData) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var cols strings.Builder
	fmt.Fprintf(&cols, `"_row" INTEGER PRIMARY KEY, "%s" TEXT NOT NULL UNIQUE`, s.ID)
	for _, c := range s.Columns {
		fmt.Fprintf(&cols, `, "%s" %s`, c.Name, sqlType(c.Type))
	}
	var texts strings.Builder
	texts.WriteString(`"_row" INTEGER PRIMARY KEY`)
	for _, t := range s.Text {
		fmt.Fprintf(&texts, `, "%s" TEXT`, t.Name)
	}
	stmts := []string{
		`PRAGMA journal_mode=OFF`, `PRAGMA synchronous=OFF`,
		`CREATE TABLE "rows" (` + cols.String() + `)`,
		`CREATE TABLE "texts" (` + texts.String() + `)`,
	}
	for _, c := range s.Columns {
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX "rows_%s" ON "rows" ("%s")`, c.Name, c.Name))
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("hybrid: sqlite %q: %w", q, err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	insRow, err := tx.PrepareContext(ctx, `INSERT INTO "rows" VALUES (`+strings.TrimSuffix(strings.Repeat("?,", len(s.Columns)+2), ",")+`)`)
	if err != nil {
		return err
	}
	insText, err := tx.PrepareContext(ctx, `INSERT INTO "texts" VALUES (`+strings.TrimSuffix(strings.Repeat("?,", len(s.Text)+1), ",")+`)`)
	if err != nil {
		return err
	}
	args := make([]any, len(s.Columns)+2)
	targs := make([]any, len(s.Text)+1)
	for i, r := range rows {
		args[0], args[1] = int64(i), r.id
		for j, c := range r.cells {
			args[j+2] = cellArg(c)
		}
		if _, err := insRow.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("hybrid: insert row %d: %w", i, err)
		}
		targs[0] = int64(i)
		for j, t := range r.texts {
			targs[j+1] = t
		}
		if _, err := insText.ExecContext(ctx, targs...); err != nil {
			return fmt.Errorf("hybrid: insert texts of row %d: %w", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `ANALYZE`)
	return err
}

func cellArg(c cell) any {
	switch c.Kind {
	case ValString:
		return c.S
	case ValInt:
		return c.I
	case ValReal:
		return c.F
	}
	return nil
}

func buildTextIndex(ctx context.Context, cfg BuildConfig, dir string, fi int, f TextField, rows []rowData) (IndexMeta, error) {
	switch f.index() {
	case IndexBM25:
		b, err := bm25.NewBuilder(bm25.Config{TempDir: dir})
		if err != nil {
			return IndexMeta{}, err
		}
		defer b.Abort()
		n := 0
		for _, r := range rows {
			if _, err := b.Add(r.texts[fi]); err != nil {
				return IndexMeta{}, err
			}
			if strings.TrimSpace(r.texts[fi]) != "" {
				n++
			}
		}
		file := f.Name + ".bm25"
		if err := b.WriteFile(filepath.Join(dir, file)); err != nil {
			return IndexMeta{}, err
		}
		return IndexMeta{Kind: IndexBM25, File: file, Count: n}, nil
	default:
		enc := cfg.Encoder
		batch := cfg.EncodeBatch
		if batch == 0 {
			batch = 64
		}
		var ids []uint32
		var texts []string
		for i, r := range rows {
			if strings.TrimSpace(r.texts[fi]) != "" {
				ids = append(ids, uint32(i))
				texts = append(texts, r.texts[fi])
			}
		}
		file := f.Name + ".vec"
		w, err := ann.CreateVectorFile(filepath.Join(dir, file), ann.Header{DType: ann.FP16, Dim: enc.Dim(), Normalized: true, EncoderID: enc.Name()})
		if err != nil {
			return IndexMeta{}, err
		}
		for lo := 0; lo < len(texts); lo += batch {
			hi := min(lo+batch, len(texts))
			v, err := enc.EncodePassages(ctx, texts[lo:hi])
			if err == nil {
				err = w.Append(v)
			}
			if err != nil {
				w.Abort()
				return IndexMeta{}, err
			}
		}
		if err := w.Close(); err != nil {
			return IndexMeta{}, err
		}
		rowsFile := f.Name + ".rows"
		if err := writeRowMap(filepath.Join(dir, rowsFile), ids); err != nil {
			return IndexMeta{}, err
		}
		return IndexMeta{Kind: IndexE5, File: file, Rows: rowsFile, Encoder: enc.Name(), Count: len(ids), Dim: enc.Dim()}, nil
	}
}

func writeRowMap(path string, ids []uint32) error {
	buf := make([]byte, 4*len(ids))
	for i, r := range ids {
		binary.LittleEndian.PutUint32(buf[4*i:], r)
	}
	return os.WriteFile(path, buf, 0o644)
}

func readRowMap(path string, n, count int) ([]int32, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(raw) != 4*count {
		return nil, fmt.Errorf("hybrid: %s: %d bytes, want %d", path, len(raw), 4*count)
	}
	out := make([]int32, count)
	prev := int64(-1)
	for i := range out {
		r := int64(binary.LittleEndian.Uint32(raw[4*i:]))
		if r <= prev || r >= int64(n) {
			return nil, fmt.Errorf("hybrid: %s: row %d at entry %d is out of order or range", path, r, i)
		}
		out[i], prev = int32(r), r
	}
	return out, nil
}

func buildImageIndex(dir string, f ImageField, path string, rows []rowData) (IndexMeta, error) {
	byID := make(map[string]int, len(rows))
	for i, r := range rows {
		byID[r.id] = i
	}
	fh, err := decompress.Open(path)
	if err != nil {
		return IndexMeta{}, fmt.Errorf("hybrid: %w", err)
	}
	defer fh.Close()
	dec := json.NewDecoder(fh)
	vecs := make(map[int][]float32)
	dim := 0
	for n := 1; ; n++ {
		var rec struct {
			ID     json.RawMessage `json:"id"`
			Vector []float32       `json:"vector"`
		}
		if err := dec.Decode(&rec); err == io.EOF {
			break
		} else if err != nil {
			return IndexMeta{}, fmt.Errorf("%s record %d: %v", path, n, err)
		}
		var id string
		if err := json.Unmarshal(rec.ID, &id); err != nil {
			id = string(bytes.TrimSpace(rec.ID))
		}
		row, ok := byID[id]
		if !ok {
			continue // vectors for rows outside the collection (or past Limit)
		}
		if dim == 0 {
			dim = len(rec.Vector)
		}
		if len(rec.Vector) == 0 || len(rec.Vector) != dim {
			return IndexMeta{}, fmt.Errorf("%s record %d: vector of %d values, want %d", path, n, len(rec.Vector), dim)
		}
		vecs[row] = rec.Vector
	}
	if len(vecs) == 0 {
		return IndexMeta{}, fmt.Errorf("%s: no vector matches a row id", path)
	}
	file := f.Name + ".vec"
	w, err := ann.CreateVectorFile(filepath.Join(dir, file), ann.Header{DType: ann.FP32, Dim: dim, EncoderID: "user"})
	if err != nil {
		return IndexMeta{}, err
	}
	var ids []uint32
	for i := range rows {
		if v, ok := vecs[i]; ok {
			if err := w.Append(v); err != nil {
				w.Abort()
				return IndexMeta{}, err
			}
			ids = append(ids, uint32(i))
		}
	}
	if err := w.Close(); err != nil {
		return IndexMeta{}, err
	}
	rowsFile := f.Name + ".rows"
	if err := writeRowMap(filepath.Join(dir, rowsFile), ids); err != nil {
		return IndexMeta{}, err
	}
	return IndexMeta{Kind: "vectors", File: file, Rows: rowsFile, Count: len(ids), Dim: dim}, nil
}

// OpenConfig configures Open.
type OpenConfig struct {
	// Encoder embeds queries of "e5" text fields; required when the
	// collection has one. Its Name must equal the name the vectors were
	// built with.
	Encoder rlsearch.Encoder
	// ImageEncoder embeds the query text of image entries that carry no
	// Vector (for example a CLIP text tower); nil means such entries fail
	// with an error naming the entry.
	ImageEncoder rlsearch.Encoder
	// K is the number of candidates each retrieval entry contributes
	// (ProRetrieval §3.1 uses K = 20 throughout); 0 means 20, at most 1000.
	K int
	// MaxResults caps the ranked rows a program returns (Result.Total still
	// counts all); 0 means 100.
	MaxResults int
	// MaxRows caps the rows one program's WHERE clause may select: SQLite
	// is asked for at most MaxRows+1 rows (LIMIT) and a program selecting
	// more fails with an *Error of Kind ErrTooManyRows naming this field
	// (over HTTP the item of that program, see Service.Serve). Whatever it
	// is, a program keeps at most MaxResults + MaxRetrievals × K rows in
	// memory while the rows stream. 0 means DefaultMaxRows.
	MaxRows int
	// Limits bound accepted programs; zero fields mean the defaults.
	Limits Limits
	// Conns is the number of read-only SQLite connections (0 = GOMAXPROCS).
	Conns int
}

// DefaultK is the paper's K: top-20 candidates per retrieval entry.
const DefaultK = 20

// DefaultMaxRows is OpenConfig.MaxRows's default: ten times the largest
// shipped collection (amazon_toys, 10,000 rows), so every program over the
// shipped collections runs; ProRetrieval's ground truth is at most 20 rows
// (§3.2), so a program selecting more is far from any gold answer.
const DefaultMaxRows = 100_000

// Validate names the first bad field.
func (c OpenConfig) Validate() error {
	switch {
	case c.K < 0 || c.K > 1000:
		return fmt.Errorf("hybrid: OpenConfig.K %d must be in [0, 1000] (SQLite binds at most 32766 parameters: 16 entries × K plus literals)", c.K)
	case c.MaxResults < 0:
		return fmt.Errorf("hybrid: OpenConfig.MaxResults %d must be >= 0", c.MaxResults)
	case c.MaxRows < 0 || c.MaxRows > math.MaxInt32:
		return fmt.Errorf("hybrid: OpenConfig.MaxRows %d must be in [0, %d]", c.MaxRows, math.MaxInt32)
	case c.Conns < 0:
		return fmt.Errorf("hybrid: OpenConfig.Conns %d must be >= 0", c.Conns)
	}
	return nil
}

// Collection is an opened collection: the read-only SQLite database, the
// field indexes and the rows in memory (ids, column values and texts, for
// the generator and for the plain-Go evaluator). It is safe for concurrent
// use; Close releases it.
type Collection struct {
	Dir    string
	Meta   Meta
	cfg    OpenConfig
	db     *sql.DB
	ids    []string
	byID   map[string]int32
	cells  [][]cell   // [row][column]
	texts  [][]string // [text field][row]
	colIdx map[string]int
	nonNFC map[string]bool // columns holding a value not in NFC (see nonNFCColumns)
	text   []fieldIndex    // per Schema.Text
	image  []fieldIndex    // per Schema.Image
}

type fieldIndex struct {
	kind string
	bm   *bm25.Index
	flat *ann.Flat
	rows []int32 // shard row -> collection row
}

// Open opens the collection in dir read-only.
func Open(ctx context.Context, dir string, cfg OpenConfig) (*Collection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.K == 0 {
		cfg.K = DefaultK
	}
	if cfg.MaxResults == 0 {
		cfg.MaxResults = 100
	}
	if cfg.MaxRows == 0 {
		cfg.MaxRows = DefaultMaxRows
	}
	if cfg.Conns == 0 {
		cfg.Conns = runtime.GOMAXPROCS(0)
	}
	meta, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	c := &Collection{Dir: dir, cfg: cfg, Meta: meta}
	// Every byte of every file against the manifest before anything is
	// used: SQLite does not checksum values, so a flipped byte inside a
	// row passes PRAGMA integrity_check and would serve wrong rows.
	if err := c.Meta.checkFiles(ctx, dir, nil); err != nil {
		return nil, err
	}
	db, err := openDB(dir, cfg.Conns)
	if err != nil {
		return nil, err
	}
	c.db = db
	if err := c.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// openDB opens rows.db of dir read-only at three levels: SQLite opens the
// file read-only (mode=ro), treats it as unchanging (immutable=1), and
// every connection has PRAGMA query_only=1.
func openDB(dir string, conns int) (*sql.DB, error) {
	abs, err := filepath.Abs(filepath.Join(dir, DBFile))
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&immutable=1&_query_only=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	return db, nil
}

// replaceDir makes the directory tmp be dst: an existing dst is first
// renamed aside, then removed once tmp is in place.
func replaceDir(tmp, dst string) error {
	old := ""
	if _, err := os.Stat(dst); err == nil {
		d, err := os.MkdirTemp(filepath.Dir(filepath.Clean(dst)), filepath.Base(dst)+".old-*")
		if err != nil {
			return err
		}
		old = filepath.Join(d, "c")
		if err := os.Rename(dst, old); err != nil {
			os.Remove(d)
			return err
		}
		defer os.RemoveAll(d)
	}
	if err := os.Rename(tmp, dst); err != nil {
		if old != "" {
			os.Rename(old, dst)
		}
		return err
	}
	return nil
}

func (c *Collection) load(ctx context.Context) error {
	s := c.Meta.Schema
	c.colIdx = map[string]int{}
	sel := []string{`"` + s.ID + `"`}
	for i, col := range s.Columns {
		c.colIdx[col.Name] = i
		sel = append(sel, `"`+col.Name+`"`)
	}
	rs, err := c.db.QueryContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM "rows" ORDER BY "_row"`)
	if err != nil {
		return fmt.Errorf("hybrid: read rows: %w", err)
	}
	defer rs.Close()
	c.byID = make(map[string]int32, c.Meta.Rows)
	dest := make([]any, len(sel))
	vals := make([]any, len(sel))
	for i := range dest {
		dest[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return err
		}
		id, _ := vals[0].(string)
		cells := make([]cell, len(s.Columns))
		for i := range s.Columns {
			switch x := vals[i+1].(type) {
			case nil:
			case string:
				cells[i] = cell{Kind: ValString, S: x}
			case int64:
				cells[i] = cell{Kind: ValInt, I: x}
			case float64:
				cells[i] = cell{Kind: ValReal, F: x}
			default:
				return fmt.Errorf("hybrid: row %d column %s: unexpected %T", len(c.ids), s.Columns[i].Name, x)
			}
		}
		c.byID[id] = int32(len(c.ids))
		c.ids = append(c.ids, id)
		c.cells = append(c.cells, cells)
	}
	if err := rs.Err(); err != nil {
		return err
	}
	if len(c.ids) != c.Meta.Rows {
		return fmt.Errorf("%w: %s: table rows has %d rows, %s says %d", ErrCorrupt, filepath.Join(c.Dir, DBFile), len(c.ids), MetaFile, c.Meta.Rows)
	}
	c.texts = make([][]string, len(s.Text))
	if len(s.Text) > 0 {
		var tsel []string
		for _, t := range s.Text {
			tsel = append(tsel, `"`+t.Name+`"`)
		}
		trs, err := c.db.QueryContext(ctx, `SELECT `+strings.Join(tsel, ", ")+` FROM "texts" ORDER BY "_row"`)
		if err != nil {
			return err
		}
		defer trs.Close()
		tv := make([]sql.NullString, len(s.Text))
		td := make([]any, len(s.Text))
		for i := range tv {
			td[i] = &tv[i]
		}
		for trs.Next() {
			if err := trs.Scan(td...); err != nil {
				return err
			}
			for i := range tv {
				c.texts[i] = append(c.texts[i], tv[i].String)
			}
		}
		if err := trs.Err(); err != nil {
			return err
		}
		if n := len(c.texts[0]); n != c.Meta.Tables["texts"] {
			return fmt.Errorf("%w: %s: table texts has %d rows, %s says %d", ErrCorrupt, filepath.Join(c.Dir, DBFile), n, MetaFile, c.Meta.Tables["texts"])
		}
	}
	c.text = make([]fieldIndex, len(s.Text))
	for i, f := range s.Text {
		im, ok := c.Meta.Indexes[f.Name]
		if !ok {
			return fmt.Errorf("hybrid: text field %s has no index", f.Name)
		}
		fx, err := c.openIndex(im)
		if err != nil {
			return fmt.Errorf("hybrid: text field %s: %w", f.Name, err)
		}
		if fx.kind == IndexE5 {
			if c.cfg.Encoder == nil {
				return fmt.Errorf("hybrid: text field %s uses e5: OpenConfig.Encoder is required", f.Name)
			}
			if c.cfg.Encoder.Name() != im.Encoder || c.cfg.Encoder.Dim() != im.Dim {
				return fmt.Errorf("hybrid: text field %s was embedded with %s (dim %d), OpenConfig.Encoder is %s (dim %d)",
					f.Name, im.Encoder, im.Dim, c.cfg.Encoder.Name(), c.cfg.Encoder.Dim())
			}
		}
		c.text[i] = fx
	}
	c.image = make([]fieldIndex, len(s.Image))
	for i, f := range s.Image {
		im, ok := c.Meta.Indexes[f.Name]
		if !ok {
			continue // no vectors: entries on this field fail at execution
		}
		fx, err := c.openIndex(im)
		if err != nil {
			return fmt.Errorf("hybrid: image field %s: %w", f.Name, err)
		}
		c.image[i] = fx
	}
	c.nonNFC = nonNFCColumns(c.Meta.Schema.ID, c.ids, c.colIdx, c.cells)
	return nil
}

func (c *Collection) openIndex(im IndexMeta) (fieldIndex, error) {
	if strings.ContainsAny(im.File, `/\`) || strings.ContainsAny(im.Rows, `/\`) || im.File == "" {
		return fieldIndex{}, fmt.Errorf("bad index file name %q", im.File)
	}
	switch im.Kind {
	case IndexBM25:
		ix, err := bm25.Open(filepath.Join(c.Dir, im.File))
		if err != nil {
			return fieldIndex{}, err
		}
		if ix.NumDocs() != c.Meta.Rows {
			return fieldIndex{}, fmt.Errorf("%s has %d rows, want %d", im.File, ix.NumDocs(), c.Meta.Rows)
		}
		return fieldIndex{kind: IndexBM25, bm: ix}, nil
	case IndexE5, "vectors":
		flat, err := ann.ReadVectorFile(filepath.Join(c.Dir, im.File))
		if err != nil {
			return fieldIndex{}, err
		}
		rows, err := readRowMap(filepath.Join(c.Dir, im.Rows), c.Meta.Rows, flat.Len())
		if err != nil {
			return fieldIndex{}, err
		}
		return fieldIndex{kind: im.Kind, flat: flat, rows: rows}, nil
	}
	return fieldIndex{}, fmt.Errorf("unknown index kind %q", im.Kind)
}

// Close releases the database; the Collection must not be used after.
func (c *Collection) Close() error {
	err := c.db.Close()
	for _, f := range append(c.text, c.image...) {
		if f.bm != nil {
			err = errors.Join(err, f.bm.Close())
		}
	}
	return err
}

// Schema returns the collection's schema (do not modify it).
func (c *Collection) Schema() *Schema { return c.Meta.Schema }

// Len is the number of rows.
func (c *Collection) Len() int { return len(c.ids) }

// ID returns the id of a row.
func (c *Collection) ID(row int32) string { return c.ids[row] }

// Row returns the row of an id.
func (c *Collection) Row(id string) (int32, bool) {
	r, ok := c.byID[id]
	return r, ok
}

// K is the number of candidates per retrieval entry.
func (c *Collection) K() int { return c.cfg.K }

// Text returns the text of a text field for a row ("" when empty or when
// the field does not exist).
func (c *Collection) Text(field string, row int32) string {
	i, ok := c.Meta.Schema.textField(field)
	if !ok || row < 0 || int(row) >= len(c.ids) {
		return ""
	}
	return c.texts[i][row]
}

// Compile parses and checks a program against this collection's schema.
func (c *Collection) Compile(p Program) (*Compiled, error) {
	return Compile(c.Meta.Schema, p, c.cfg.Limits)
}

// cellOf returns a row's value of a column (the id column included).
func (c *Collection) cellOf(row int32, name string) cell {
	if name == c.Meta.Schema.ID {
		return cell{Kind: ValString, S: c.ids[row]}
	}
	i, ok := c.colIdx[name]
	if !ok {
		return cell{}
	}
	return c.cells[row][i]
}
