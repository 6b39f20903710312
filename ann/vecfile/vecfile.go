package vecfile

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/internal/decompress"
)

var (
	// ErrFormat is wrapped by every error about a malformed, truncated or
	// inconsistent file; the message names the byte offset and the field.
	ErrFormat = errors.New("vecfile: bad vector file")
	// ErrUnsupported is wrapped when a well-formed file holds something this
	// package does not read (float64, big-endian, Fortran order, a faiss
	// index of lossy codes such as PQ or SQ8); the message says what to
	// pass instead.
	ErrUnsupported = errors.New("vecfile: unsupported vector file")
)

// Format names a file format.
type Format string

// Formats read by this package.
const (
	FaissFlat Format = "faiss-flat"     // IndexFlatIP ("IxFI") or IndexFlatL2 ("IxF2")
	FaissHNSW Format = "faiss-hnsw"     // IndexHNSWFlat ("IHNf"), or IndexHNSWSQ ("IHNs") over fp16 storage
	FaissIVF  Format = "faiss-ivf-flat" // IndexIVFFlat ("IwFl")
	FaissSQ   Format = "faiss-sq-fp16"  // IndexScalarQuantizer ("IxSQ") with QT_fp16
	NPY       Format = "npy"
	FVecs     Format = "fvecs"
)

// Metric is the similarity a faiss index was built for.
type Metric int

// Metrics. Unknown is reported for .npy and .fvecs files, which carry none.
const (
	Unknown Metric = iota
	InnerProduct
	L2
)

func (m Metric) String() string {
	switch m {
	case InnerProduct:
		return "inner product"
	case L2:
		return "L2"
	}
	return "unknown"
}

// Limits on what a header may claim. MaxDim matches ann's shard limit;
// MaxCount is the shard's row limit (int32 row numbers).
const (
	MaxDim   = 1 << 16
	MaxCount = 1<<31 - 1
	// maxNPYHeader bounds the .npy header dict: numpy itself refuses
	// headers over 10,000 bytes by default (numpy.lib.format
	// _MAX_HEADER_SIZE), 64 KiB leaves room for hand-written files.
	maxNPYHeader = 1 << 16
)

// HeadLen is how many leading bytes parseHeader may need (fewer when the
// file is shorter).
const HeadLen = 12 + maxNPYHeader

// Info describes a vector file.
type Info struct {
	Format Format
	Metric Metric // faiss files only
	Count  int    // rows
	Dim    int
	// ElemSize is 4 (float32) or 2 (float16: .npy, faiss QT_fp16).
	ElemSize int
	// DataOffset is the byte offset of row 0 when the rows are stored in
	// row order, one after the other (0 when Gathered); RowBytes the stored
	// bytes of one row (including the 4-byte dimension of an .fvecs row).
	DataOffset int64
	RowBytes   int64
	// Gathered is set when rows are not stored in row order (IndexIVFFlat's
	// inverted lists, an IndexIDMap whose ids are not 0, 1, 2, ...): Read
	// then gathers each chunk's rows from their places in the file.
	Gathered bool
	// Desc names the faiss index structure, such as
	// "IndexIDMap(IndexHNSW(M=64, storage IndexFlatIP))"; "" otherwise.
	Desc string
}

func (i Info) String() string {
	f := string(i.Format)
	if i.Desc != "" {
		f = i.Desc
	}
	s := fmt.Sprintf("%s, %d × %d float%d", f, i.Count, i.Dim, 8*i.ElemSize)
	if i.Metric != Unknown {
		s += ", metric " + i.Metric.String()
	}
	return s
}

func formatErr(off int64, field, format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s: %s", ErrFormat, off, field, fmt.Sprintf(format, a...))
}

func unsupported(off int64, field, format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s: %s", ErrUnsupported, off, field, fmt.Sprintf(format, a...))
}

// parseHeader reads the header in head (the file's first min(size,
// HeadLen) bytes) of an .npy or .fvecs file of size bytes named name (its
// extension identifies .fvecs). It checks every claimed size against size:
// the data must end exactly at the end of the file. It allocates nothing in
// proportion to a claimed size. Errors wrap ErrFormat or ErrUnsupported.
// faiss files are parsed by parseFaissFile, which needs the whole file.
func parseHeader(head []byte, size int64, name string) (Info, error) {
	// No vector format starts like a compressed stream (an .fvecs
	// dimension with these bytes is far above MaxDim; faiss fourccs and
	// the .npy magic differ).
	if f, err := decompress.Sniff(head); err != nil {
		return Info{}, fmt.Errorf("%w: %s: %w", ErrUnsupported, name, err)
	} else if f != decompress.Plain {
		tool := map[decompress.Format]string{decompress.Gzip: "gzip -d", decompress.Zstd: "zstd -d"}[f]
		return Info{}, fmt.Errorf("%w: %s: %s-compressed; vectors are imported from the uncompressed file (read in place with random access, every size checked against the file's): decompress it first (%s)", ErrUnsupported, name, f, tool)
	}
	switch {
	case len(head) >= 6 && string(head[:6]) == "\x93NUMPY":
		return parseNPY(head, size)
	case strings.EqualFold(filepath.Ext(name), ".fvecs"):
		return parseFVecs(head, size)
	}
	return Info{}, fmt.Errorf("%w: %s: not a faiss index, .npy or .fvecs file", ErrUnsupported, name)
}

func parseNPY(b []byte, size int64) (Info, error) {
	le := binary.LittleEndian
	if len(b) < 10 {
		return Info{}, formatErr(int64(len(b)), "header", "file ends after %d bytes, before the .npy header length", len(b))
	}
	major, minor := b[6], b[7]
	var hlen, start int64
	switch major {
	case 1:
		hlen, start = int64(le.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return Info{}, formatErr(int64(len(b)), "header", "file ends after %d bytes, before the .npy header length", len(b))
		}
		hlen, start = int64(le.Uint32(b[8:])), 12
	default:
		return Info{}, unsupported(6, "version", ".npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if minor != 0 {
		return Info{}, unsupported(7, "version", ".npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if hlen > maxNPYHeader {
		return Info{}, formatErr(8, "header length", "%d bytes, at most %d", hlen, maxNPYHeader)
	}
	if start+hlen > int64(len(b)) || start+hlen > size {
		return Info{}, formatErr(8, "header length", "%d bytes from offset %d run past the end of the file (%d bytes)", hlen, start, min(size, int64(len(b))))
	}
	text := string(b[start : start+hlen])
	if major < 3 {
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 {
				return Info{}, formatErr(start+int64(i), "header", "non-ASCII byte in a version %d.0 header", major)
			}
		}
	}
	dict, err := parseDict(text)
	if err != nil {
		return Info{}, formatErr(start, "header", "%v in %q", err, truncate(text, 120))
	}
	in := Info{Format: NPY, DataOffset: start + hlen}
	descr, ok := dict["descr"].(string)
	if !ok {
		return Info{}, formatErr(start, "descr", "missing or not a string")
	}
	switch descr {
	case "<f4":
		in.ElemSize = 4
	case "<f2":
		in.ElemSize = 2
	default:
		hint := ""
		if strings.HasSuffix(descr, "f8") {
			hint = " (float64: save with arr.astype('float32'))"
		} else if strings.HasPrefix(descr, ">") {
			hint = " (big-endian: save with arr.astype('<f4'))"
		}
		return Info{}, unsupported(start, "descr", "dtype %q, want '<f4' (float32) or '<f2' (float16)%s", descr, hint)
	}
	fo, ok := dict["fortran_order"].(bool)
	if !ok {
		return Info{}, formatErr(start, "fortran_order", "missing or not True/False")
	}
	if fo {
		return Info{}, unsupported(start, "fortran_order", "Fortran (column-major) order: save with np.ascontiguousarray(arr)")
	}
	shape, ok := dict["shape"].([]int64)
	if !ok {
		return Info{}, formatErr(start, "shape", "missing or not a tuple of integers")
	}
	if len(shape) != 2 {
		return Info{}, unsupported(start, "shape", "%d dimensions %v, want (n, d)", len(shape), shape)
	}
	n, d := shape[0], shape[1]
	switch {
	case d < 1 || d > MaxDim:
		return Info{}, formatErr(start, "shape", "d = %d must be in 1..%d", d, MaxDim)
	case n < 0 || n > MaxCount:
		return Info{}, formatErr(start, "shape", "n = %d must be in 0..%d", n, MaxCount)
	}
	in.Count, in.Dim, in.RowBytes = int(n), int(d), d*int64(in.ElemSize)
	if want := in.DataOffset + n*in.RowBytes; want != size {
		return Info{}, formatErr(in.DataOffset, "data", "file is %d bytes, header implies %d (%d × %d × %d bytes from offset %d): truncated or trailing bytes", size, want, n, d, in.ElemSize, in.DataOffset)
	}
	return in, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// parseDict parses the Python dict literal of an .npy header: string keys,
// values that are strings, True/False or tuples of non-negative integers.
func parseDict(s string) (map[string]any, error) {
	p := &dictParser{s: s}
	p.space()
	if !p.eat('{') {
		return nil, fmt.Errorf("dict does not start with '{'")
	}
	m := map[string]any{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(':') {
			return nil, fmt.Errorf("missing ':' after key %q", k)
		}
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", k, err)
		}
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("duplicate key %q", k)
		}
		m[k] = v
		p.space()
		if p.eat(',') {
			continue
		}
		p.space()
		if !p.eat('}') {
			return nil, fmt.Errorf("expected ',' or '}' at byte %d", p.i)
		}
		break
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected text after the dict at byte %d", p.i)
	}
	return m, nil
}

type dictParser struct {
	s string
	i int
}

func (p *dictParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *dictParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dictParser) str() (string, error) {
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("expected a quoted string at byte %d", p.i)
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated string at byte %d", p.i)
	}
	v := p.s[p.i+1 : p.i+1+end]
	if strings.IndexByte(v, '\\') >= 0 {
		return "", fmt.Errorf("escape sequence in string at byte %d", p.i)
	}
	p.i += end + 2
	return v, nil
}

func (p *dictParser) value() (any, error) {
	switch {
	case p.i >= len(p.s):
		return nil, fmt.Errorf("missing value")
	case p.s[p.i] == '\'' || p.s[p.i] == '"':
		return p.str()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	case p.s[p.i] == '(':
		p.i++
		var dims []int64
		for {
			p.space()
			if p.eat(')') {
				break
			}
			j := p.i
			for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
				p.i++
			}
			// numpy writes plain ints; older Pythons wrote 3L.
			n, err := strconv.ParseInt(p.s[j:p.i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("bad integer %q in shape at byte %d", p.s[j:p.i], j)
			}
			p.eat('L')
			dims = append(dims, n)
			if len(dims) > 32 {
				return nil, fmt.Errorf("more than 32 dimensions")
			}
			p.space()
			if p.eat(',') {
				continue
			}
			p.space()
			if !p.eat(')') {
				return nil, fmt.Errorf("expected ',' or ')' in shape at byte %d", p.i)
			}
			break
		}
		if dims == nil {
			dims = []int64{}
		}
		return dims, nil
	}
	return nil, fmt.Errorf("unsupported value at byte %d", p.i)
}

func parseFVecs(b []byte, size int64) (Info, error) {
	in := Info{Format: FVecs, ElemSize: 4}
	if size == 0 {
		return Info{}, formatErr(0, "d", "empty .fvecs file: no row gives the dimension")
	}
	if len(b) < 4 {
		return Info{}, formatErr(0, "d", "file ends after %d bytes, before the first row's dimension", len(b))
	}
	d := int64(int32(binary.LittleEndian.Uint32(b)))
	if d < 1 || d > MaxDim {
		return Info{}, formatErr(0, "d", "%d must be in 1..%d", d, MaxDim)
	}
	in.Dim, in.RowBytes = int(d), 4+4*d
	if size%in.RowBytes != 0 {
		return Info{}, formatErr(size-size%in.RowBytes, "row", "file is %d bytes, not a multiple of the row size %d (4 + 4·%d): truncated", size, in.RowBytes, d)
	}
	n := size / in.RowBytes
	if n > MaxCount {
		return Info{}, formatErr(0, "rows", "%d rows, at most %d", n, MaxCount)
	}
	in.Count = int(n)
	return in, nil
}

// Reader streams the rows of a vector file. It is not safe for concurrent
// use.
type Reader struct {
	ra    io.ReaderAt
	c     io.Closer
	info  Info
	node  *faissNode // faiss files: the row layout and the graph
	br    *bufio.Reader
	row   int
	raw   []byte
	order []int // Read of a gathered chunk: rows sorted by file offset
	offs  []int64
}

// Open opens the vector file at path and parses its header. Errors: file
// errors, ErrFormat, ErrUnsupported (naming path).
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vecfile: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("vecfile: %w", err)
	}
	r, err := NewReader(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.c = f
	return r, nil
}

// NewReader reads the vector file held by ra (size bytes; name gives the
// extension for .fvecs). The caller keeps ownership of ra. A faiss file is
// walked whole (every field checked, the file must end where the index
// does); memory: an IndexIVFFlat keeps a table of 8 bytes per row (the
// row's place in the inverted lists) and an IndexIDMap with ids other
// than 0, 1, 2, ... a permutation of 4 bytes per row, whatever the
// dimension. Errors wrap ErrFormat or ErrUnsupported.
func NewReader(ra io.ReaderAt, size int64, name string) (*Reader, error) {
	head := make([]byte, min(size, HeadLen))
	if n, err := ra.ReadAt(head, 0); n < len(head) {
		return nil, fmt.Errorf("vecfile: read header: %w", err)
	}
	r := &Reader{ra: ra}
	if faissMagic(head) {
		info, node, err := parseFaissFile(ra, size)
		if err != nil {
			return nil, err
		}
		r.info, r.node = info, node
	} else {
		info, err := parseHeader(head, size, name)
		if err != nil {
			return nil, err
		}
		r.info = info
	}
	r.Rewind()
	return r, nil
}

// Graph returns the HNSW graph of a faiss IndexHNSW file (rows as its
// nodes), or nil for any other file. The Graph reads the file on demand,
// so it is valid until Close; each call returns a new Graph.
func (r *Reader) Graph() *Graph {
	if r.node == nil || r.node.graph == nil {
		return nil
	}
	g := *r.node.graph
	return &g
}

// Info describes the file.
func (r *Reader) Info() Info { return r.info }

// Rewind starts reading again at row 0 (for a second pass).
func (r *Reader) Rewind() {
	r.row = 0
	if r.info.Gathered {
		return
	}
	sr := io.NewSectionReader(r.ra, r.info.DataOffset, int64(r.info.Count)*r.info.RowBytes)
	if r.br == nil {
		r.br = bufio.NewReaderSize(sr, 1<<20)
	} else {
		r.br.Reset(sr)
	}
	r.row = 0
}

// Row is the index of the next row Read returns.
func (r *Reader) Row() int { return r.row }

// Read decodes up to len(dst)/Dim rows into dst as row-major float32
// (float16 widened exactly) and returns how many. It returns 0, io.EOF
// after the last row. Errors: ErrFormat naming the offset (a file
// truncated since Open, an .fvecs row with another dimension).
func (r *Reader) Read(dst []float32) (int, error) {
	in := r.info
	rows := min(len(dst)/in.Dim, in.Count-r.row)
	if rows <= 0 {
		if r.row >= in.Count {
			return 0, io.EOF
		}
		return 0, fmt.Errorf("vecfile: Read: buffer of %d values holds no %d-d row", len(dst), in.Dim)
	}
	need := rows * int(in.RowBytes)
	if cap(r.raw) < need {
		r.raw = make([]byte, need)
	}
	raw := r.raw[:need]
	if in.Gathered {
		if err := r.gather(raw, rows); err != nil {
			return 0, err
		}
	} else if n, err := io.ReadFull(r.br, raw); err != nil {
		off := in.DataOffset + int64(r.row)*in.RowBytes + int64(n)
		return 0, formatErr(off, "data", "read row %d: %v", r.row+n/int(in.RowBytes), err)
	}
	le := binary.LittleEndian
	d := in.Dim
	for i := 0; i < rows; i++ {
		src := raw[i*int(in.RowBytes):]
		out := dst[i*d : (i+1)*d]
		switch {
		case in.Format == FVecs:
			if got := int32(le.Uint32(src)); got != int32(d) {
				off := in.DataOffset + int64(r.row+i)*in.RowBytes
				return 0, formatErr(off, "d", "row %d has dimension %d, the first row %d", r.row+i, got, d)
			}
			src = src[4:]
			for j := range out {
				out[j] = math.Float32frombits(le.Uint32(src[4*j:]))
			}
		case in.ElemSize == 2:
			for j := range out {
				out[j] = float16.Frombits(le.Uint16(src[2*j:])).Float32()
			}
		default:
			for j := range out {
				out[j] = math.Float32frombits(le.Uint32(src[4*j:]))
			}
		}
	}
	r.row += rows
	return rows, nil
}

// gather reads rows r.row .. r.row+rows-1 of a gathered layout into raw,
// in file order: rows next to each other both in the file and in the chunk
// are read with one call.
func (r *Reader) gather(raw []byte, rows int) error {
	rb, nd := r.info.RowBytes, r.node
	r.offs, r.order = r.offs[:0], r.order[:0]
	for i := 0; i < rows; i++ {
		row := r.row + i
		off := nd.base + int64(row)*rb
		switch {
		case nd.table != nil:
			off = nd.table[row]
		case nd.perm != nil:
			off = nd.base + int64(nd.perm[row])*rb
		}
		r.offs = append(r.offs, off)
		r.order = append(r.order, i)
	}
	slices.SortFunc(r.order, func(a, b int) int { return cmp.Compare(r.offs[a], r.offs[b]) })
	for lo := 0; lo < rows; {
		hi := lo + 1
		for hi < rows && r.offs[r.order[hi]] == r.offs[r.order[hi-1]]+rb && r.order[hi] == r.order[hi-1]+1 {
			hi++
		}
		i0, off := r.order[lo], r.offs[r.order[lo]]
		if _, err := r.ra.ReadAt(raw[int64(i0)*rb:int64(i0+hi-lo)*rb], off); err != nil {
			return formatErr(off, "data", "read row %d: %v", r.row+i0, err)
		}
		lo = hi
	}
	return nil
}

// Close closes the file opened by Open (a no-op for NewReader).
func (r *Reader) Close() error {
	if r.c != nil {
		return r.c.Close()
	}
	return nil
}
