package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// DefaultMaxLine is the longest line a Reader accepts when MaxLine is 0:
// 64 MiB, the largest request body any endpoint accepts
// (sdk.DefaultMaxBodyBytes, reward.DefaultMaxBodyBytes), so a line that
// would be a valid request body is a valid line.
const DefaultMaxLine = 64 << 20

// ErrLineTooLong: a line is longer than the Reader's limit.
var ErrLineTooLong = errors.New("jsonl: line too long")

// Reader yields the non-blank lines of a stream. Not safe for concurrent
// use.
type Reader struct {
	sc   *bufio.Scanner
	name string
	max  int
	line int
	err  error
}

// NewReader reads r; name (a file name, "stdin") prefixes error messages
// ("" = none). maxLine bounds a line's length in bytes (0 = DefaultMaxLine).
func NewReader(r io.Reader, name string, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(maxLine, 1<<20)), maxLine+2) // + "\r\n"
	return &Reader{sc: sc, name: name, max: maxLine}
}

// Next returns the next non-blank line, trimmed of surrounding white
// space, and its 1-based number. The slice is valid until the next call.
// At the end it returns io.EOF; a read error or ErrLineTooLong is wrapped
// with the name and the line number.
func (r *Reader) Next() ([]byte, int, error) {
	if r.err != nil {
		return nil, r.line, r.err
	}
	for r.sc.Scan() {
		r.line++
		if len(r.sc.Bytes()) > r.max {
			r.err = r.Errorf(r.line, "%w: over %d bytes", ErrLineTooLong, r.max)
			return nil, r.line, r.err
		}
		if b := bytes.TrimSpace(r.sc.Bytes()); len(b) > 0 {
			return b, r.line, nil
		}
	}
	r.err = io.EOF
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("%w: over %d bytes", ErrLineTooLong, r.max)
		}
		r.err = r.Errorf(r.line+1, "%w", err)
	}
	return nil, r.line, r.err
}

// Errorf formats an error about line n, prefixed with the reader's name:
// "NAME line N: ...". %w wraps as in fmt.Errorf.
func (r *Reader) Errorf(n int, format string, a ...any) error {
	prefix := fmt.Sprintf("line %d: ", n)
	if r.name != "" {
		prefix = r.name + " " + prefix
	}
	return fmt.Errorf(prefix+format, a...)
}

// Each calls fn for every non-blank line until fn returns an error (that
// error is returned as it is) or the stream ends (nil).
func (r *Reader) Each(fn func(line int, raw []byte) error) error {
	for {
		b, n, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(n, b); err != nil {
			return err
		}
	}
}

// DecodeStrict decodes one JSON object from b into v exactly as the HTTP
// endpoints decode a body (internal/jsonbody, Reject): unknown and
// near-miss keys (any other capitalisation included), invalid UTF-8, deep
// nesting and data after the object are errors naming the field path.
func DecodeStrict(b []byte, v any) error {
	return jsonbody.Decode(b, v, jsonbody.Reject)
}

// Open opens path for reading, or stdin for "" and "-". The closer is a
// no-op for stdin.
func Open(path string) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		return io.NopCloser(os.Stdin), "stdin", nil
	}
	f, err := os.Open(path)
	return f, path, err
}

// Writer writes one JSON value per line, without HTML escaping, through
// a buffer: call Flush (or use WriteFile) at the end. Not safe for
// concurrent use.
type Writer struct {
	bw  *bufio.Writer
	enc *json.Encoder
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	return &Writer{bw: bw, enc: enc}
}

// Write encodes v as one line.
func (w *Writer) Write(v any) error { return w.enc.Encode(v) }

// Flush writes out the buffer.
func (w *Writer) Flush() error { return w.bw.Flush() }

// WriteFile runs fn with a Writer onto path, written atomically (see
// package atomicfile), or onto stdout when path is "" or "-". An error of
// fn leaves path untouched.
func WriteFile(path string, stdout io.Writer, fn func(*Writer) error) error {
	return Output(path, stdout, func(f io.Writer) error {
		w := NewWriter(f)
		if err := fn(w); err != nil {
			return err
		}
		return w.Flush()
	})
}

// Output runs fn onto path, written atomically (see package atomicfile),
// or onto stdout when path is "" or "-". An error of fn leaves path
// untouched (on stdout, what fn wrote before the error stays written).
// fn should buffer its writes.
func Output(path string, stdout io.Writer, fn func(io.Writer) error) error {
	if path == "" || path == "-" {
		return fn(stdout)
	}
	return atomicfile.WriteFile(path, 0o644, fn)
}
