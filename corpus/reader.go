package corpus

import (
	"bufio"
	"bytes"
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
	"unicode"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/decompress"
	"github.com/rlsearch/rlsearch/internal/utf8x"
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
	// URL is the line's "url" field ("" when it has none), as ASearcher's
	// wiki corpus carries one per passage.
	URL string
}

// Reader streams passages. Create one with Open or NewReader.
// It is not safe for concurrent use.
type Reader struct {
	br       *bufio.Reader
	closers  []io.Closer
	counter  *countingReader
	format   decompress.Format
	line     int
	off      int64  // byte offset of the next line in the (decompressed) text
	lineOff  int64  // byte offset of the current line
	buf      []byte // the current line (readLine)
	skipped  int
	seen     map[idKey]int32 // 96-bit hash of id -> line
	seeds    [2]maphash.Seed
	checkDup bool
}

// Open opens a corpus file (plain, .gz or .zst, detected from the magic
// bytes by package internal/decompress; a zstd file may start with
// skippable frames). Close the Reader when done.
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

// NewReader reads a corpus from r (plain, gzip or zstd, see Open). Duplicate ids are
// detected with a set of 96-bit hashes of the ids (from two independently
// seeded maphash values; a false duplicate among wiki-18's 21M ids has
// probability n²/2⁹⁷ ≈ 3·10⁻¹⁵): about 40 bytes per passage with the map's
// slack (measured at 1M ids) and no pointers for the garbage collector to
// scan, instead of every id string (77 bytes per passage measured).
// Errors: a compression format that is not read (xz, bzip2, ...: wraps
// decompress.ErrUnsupported), a bad gzip header.
func NewReader(r io.Reader) (*Reader, error) {
	cr := &countingReader{r: r}
	dr, err := decompress.NewReader(cr, 1<<20)
	if err != nil {
		return nil, err
	}
	rd := &Reader{counter: cr, format: dr.Format, seen: make(map[idKey]int32), seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, checkDup: true}
	rd.closers = append(rd.closers, dr)
	rd.br = dr.Reader
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
	URL      *string         `json:"url"`
}

// Next returns the next non-empty passage, or io.EOF after the last one.
// Errors wrap ErrBadLine or ErrDuplicateID and name the 1-based line
// number and a byte offset, both in the line and in the file (in the
// decompressed text of a .gz/.zst file): of the offending byte for invalid
// UTF-8 and JSON syntax, of the line's start otherwise. A read or
// decompression error (a truncated or corrupt .gz/.zst) names the line
// being read and where it starts, and wraps neither.
func (r *Reader) Next() (Passage, error) {
	for {
		raw, err := r.readLine()
		if errors.Is(err, ErrLineTooLong) {
			return Passage{}, fmt.Errorf("%w: line %d, which starts at byte offset %d of the %s (a file without newlines, or a decompression bomb?)", err, r.line+1, r.off, r.text())
		}
		if err != nil && err != io.EOF {
			// A truncated .gz/.zst ends with a decompression error: report it
			// rather than a JSON error on the partial last line.
			return Passage{}, fmt.Errorf("corpus: read line %d (it starts at byte offset %d of the %s): %w (truncated or corrupt file?)", r.line+1, r.off, r.text(), err)
		}
		if len(raw) == 0 && err == io.EOF {
			return Passage{}, io.EOF
		}
		r.line++
		r.lineOff, r.off = r.off, r.off+int64(len(raw))
		lead := 0
		if r.line == 1 && bytes.HasPrefix(raw, bom) {
			raw, lead = raw[len(bom):], len(bom)
		}
		trimmed := bytes.TrimLeftFunc(raw, unicode.IsSpace)
		lead += len(raw) - len(trimmed)
		raw = bytes.TrimRightFunc(trimmed, unicode.IsSpace) // with the left trim: bytes.TrimSpace
		if len(raw) == 0 {
			continue // blank line
		}
		p, skip, perr := r.parse(raw, lead)
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

// MaxLineBytes bounds one corpus line: 64 MiB, four orders of magnitude
// above a Wikipedia passage (wiki-18's lines are a few KB), so that a
// file without newlines, or a small .zst that expands to gigabytes of one
// line, is an error rather than all of memory.
const MaxLineBytes = 64 << 20

// ErrLineTooLong is returned (wrapped, naming the line and its offset)
// for a line over MaxLineBytes.
var ErrLineTooLong = fmt.Errorf("corpus: line longer than %d bytes", MaxLineBytes)

// readLine reads the next line with its '\n' into a buffer reused by the
// next call, at most MaxLineBytes of it.
func (r *Reader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		if len(r.buf)+len(frag) > MaxLineBytes {
			return nil, ErrLineTooLong
		}
		r.buf = append(r.buf, frag...)
		if err != bufio.ErrBufferFull {
			return r.buf, err
		}
	}
}

// bom is the UTF-8 byte-order mark, dropped from the start of line 1.
var bom = []byte("\xef\xbb\xbf")

// text names what byte offsets count: the file itself, or the
// decompressed text of a compressed one.
func (r *Reader) text() string {
	if r.format == decompress.Plain {
		return "file"
	}
	return "decompressed " + string(r.format) + " text"
}

// at names byte i of the current line: "byte offset i of the line, byte
// offset F of the file".
func (r *Reader) at(i int) string {
	return fmt.Sprintf("at byte offset %d of the line, byte offset %d of the %s", i, r.lineOff+int64(i), r.text())
}

// start names where the current line starts, for errors about the line
// as a whole.
func (r *Reader) start() string {
	return fmt.Sprintf("(line %d starts at byte offset %d of the %s)", r.line, r.lineOff, r.text())
}

// parse decodes one trimmed line; lead is the number of bytes trimmed
// from its start (byte-order mark, spaces), for error offsets.
func (r *Reader) parse(raw []byte, lead int) (Passage, bool, error) {
	// encoding/json would turn invalid UTF-8 inside strings into U+FFFD
	// silently, and report a stray byte outside them as an "invalid
	// character": name the byte instead.
	if i := utf8x.InvalidOffset(raw); i >= 0 {
		return Passage{}, false, fmt.Errorf("%w %d: invalid UTF-8 (byte 0x%02x) %s", ErrBadLine, r.line, raw[i], r.at(lead+i))
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field == "":
			return Passage{}, false, fmt.Errorf("%w %d: want a JSON object, got %s %s", ErrBadLine, r.line, te.Value, r.start())
		case errors.As(err, &te):
			return Passage{}, false, fmt.Errorf("%w %d: %q must be a string, got %s %s", ErrBadLine, r.line, te.Field, te.Value, r.start())
		case errors.As(err, &se):
			// Offset counts the bytes read up to and including the bad one.
			i := max(int(se.Offset)-1, 0)
			if se.Offset >= int64(len(raw)) {
				i = len(raw) // the line ended inside the value
			}
			return Passage{}, false, fmt.Errorf("%w %d: %v %s", ErrBadLine, r.line, err, r.at(lead+i))
		}
		return Passage{}, false, fmt.Errorf("%w %d: %v %s", ErrBadLine, r.line, err, r.start())
	}
	id, err := parseID(l.ID)
	if err != nil {
		return Passage{}, false, fmt.Errorf("%w %d: %v %s", ErrBadLine, r.line, err, r.start())
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
		return Passage{}, false, fmt.Errorf(`%w %d: no "contents" and no "title"/"text" field %s`, ErrBadLine, r.line, r.start())
	}
	if strings.TrimSpace(text) == "" {
		return Passage{}, true, nil
	}
	if r.checkDup {
		var k idKey
		binary.LittleEndian.PutUint64(k[:8], maphash.String(r.seeds[0], id))
		binary.LittleEndian.PutUint32(k[8:], uint32(maphash.String(r.seeds[1], id)))
		if prev, ok := r.seen[k]; ok {
			return Passage{}, false, fmt.Errorf("%w %q on line %d (first on line %d) %s", ErrDuplicateID, id, r.line, prev, r.start())
		}
		r.seen[k] = int32(min(r.line, math.MaxInt32))
	}
	p := Passage{Document: rlsearch.Document{ID: id, Contents: contents}, Line: r.line}
	if l.URL != nil {
		p.URL = *l.URL
	}
	return p, false, nil
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
