package corpus

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"

	"github.com/rlsearch/rlsearch"
)

// ErrDuplicateID is returned (wrapped, with both line numbers) when an id
// appears twice in one corpus.
var ErrDuplicateID = errors.New("corpus: duplicate id")

// ErrBadLine is returned (wrapped, with the line number) for a line that is
// not a JSON object with a usable id and text.
var ErrBadLine = errors.New("corpus: bad line")

// Passage is one corpus passage.
type Passage struct {
	rlsearch.Document
	// Line is the 1-based line number in the file.
	Line int
}

// Reader streams passages. Create one with Open or NewReader.
// It is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	closers  []io.Closer
	counter  *countingReader
	line     int
	skipped  int
	seen     map[idKey]int32 // 96-bit hash of id -> line
	seeds    [2]maphash.Seed
	checkDup bool
}

// Open opens a corpus file (plain, .gz or .zst, detected from the magic
// bytes). Close the Reader when done.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("corpus: %s: %w", path, err)
	}
	r.closers = append(r.closers, f)
	return r, nil
}

// NewReader reads a corpus from r (plain, gzip or zstd). Duplicate ids are
// detected with a set of 96-bit hashes of the ids (from two independently
// seeded maphash values; a false duplicate among wiki-18's 21M ids has
// probability n²/2⁹⁷ ≈ 3·10⁻¹⁵): about 40 bytes per passage with the map's
// slack (measured at 1M ids) and no pointers for the garbage collector to
// scan, instead of every id string (77 bytes per passage measured).
func NewReader(r io.Reader) (*Reader, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<20)
	rd := &Reader{counter: cr, seen: make(map[idKey]int32), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, checkDup: true}
	magic, _ := br.Peek(4)
	switch {
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		rd.closers = append(rd.closers, gz)
		br = bufio.NewReaderSize(gz, 1<<20)
	case len(magic) == 4 && bytes.Equal(magic, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		rd.closers = append(rd.closers, closerFunc(func() error { zr.Close(); return nil }))
		br = bufio.NewReaderSize(zr, 1<<20)
	}
	rd.br = br
	return rd, nil
}

// idKey is a 96-bit hash of a passage id; a byte array (alignment 1) so
// that a map slot with its int32 line is 16 bytes.
type idKey [12]byte

type line struct {
	ID       json.RawMessage `json:"id"`
	Contents *string         `json:"contents"`
	Title    *string         `json:"title"`
	Text     *string         `json:"text"`
}

// Next returns the next non-empty passage, or io.EOF after the last one.
// Errors wrap ErrBadLine or ErrDuplicateID and name the line number.
func (r *Reader) Next() (Passage, error) {
	for {
		raw, err := r.br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			// A truncated .gz/.zst ends with a decompression error: report it
			// rather than a JSON error on the partial last line.
			return Passage{}, fmt.Errorf("corpus: read line %d: %w (truncated or corrupt file?)", r.line+1, err)
		}
		if len(raw) == 0 && err == io.EOF {
			return Passage{}, io.EOF
		}
		r.line++
		if r.line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // UTF-8 byte-order mark
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue // blank line
		}
		p, skip, perr := r.parse(raw)
		if perr != nil {
			return Passage{}, perr
		}
		if skip {
			r.skipped++
			continue
		}
		return p, nil
	}
}

func (r *Reader) parse(raw []byte) (Passage, bool, error) {
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return Passage{}, false, fmt.Errorf("%w %d: want a JSON object, got %s", ErrBadLine, r.line, te.Value)
			}
			return Passage{}, false, fmt.Errorf("%w %d: %q must be a string, got %s", ErrBadLine, r.line, te.Field, te.Value)
		}
		return Passage{}, false, fmt.Errorf("%w %d: %v", ErrBadLine, r.line, err)
	}
	id, err := parseID(l.ID)
	if err != nil {
		return Passage{}, false, fmt.Errorf("%w %d: %v", ErrBadLine, r.line, err)
	}
	var contents, text string
	switch {
	case l.Contents != nil:
		contents = *l.Contents
		text = rlsearch.Document{Contents: contents}.Text()
	case l.Text != nil || l.Title != nil:
		var title string
		if l.Title != nil {
			title = *l.Title
		}
		if l.Text != nil {
			text = *l.Text
		}
		contents = rlsearch.MakeContents(title, text)
	default:
		return Passage{}, false, fmt.Errorf(`%w %d: no "contents" and no "title"/"text" field`, ErrBadLine, r.line)
	}
	if strings.TrimSpace(text) == "" {
		return Passage{}, true, nil
	}
	if r.checkDup {
		var k idKey
		binary.LittleEndian.PutUint64(k[:8], maphash.String(r.seeds[0], id))
		binary.LittleEndian.PutUint32(k[8:], uint32(maphash.String(r.seeds[1], id)))
		if prev, ok := r.seen[k]; ok {
			return Passage{}, false, fmt.Errorf("%w %q on line %d (first on line %d)", ErrDuplicateID, id, r.line, prev)
		}
		r.seen[k] = int32(min(r.line, math.MaxInt32))
	}
	return Passage{Document: rlsearch.Document{ID: id, Contents: contents}, Line: r.line}, false, nil
}

func parseID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`missing "id"`)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf(`"id": %v`, err)
		}
		if s == "" {
			return "", errors.New(`empty "id"`)
		}
		return s, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", fmt.Errorf(`"id": %v`, err)
		}
		return n.String(), nil
	}
	return "", fmt.Errorf(`"id" must be a string or a number, got %s`, raw)
}

// Skipped is the number of passages skipped so far because their text was
// empty or whitespace-only.
func (r *Reader) Skipped() int { return r.skipped }

// Line is the number of lines read so far.
func (r *Reader) Line() int { return r.line }

// BytesRead is the number of bytes consumed from the underlying file
// (compressed bytes for .gz/.zst), for progress reporting. Safe to call
// while another goroutine reads: the zstd decoder reads the file on its
// own goroutine.
func (r *Reader) BytesRead() int64 { return r.counter.n.Load() }

// Close releases the file and decompressors.
func (r *Reader) Close() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	r.closers = nil
	return first
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
