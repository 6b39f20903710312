package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// The cache file (rlsearch serve --cache-save / --cache-load) holds a
// cache's entries for a warm restart or for the other replicas of one
// build:
//
//	magic  "RLSCACHE" then version byte 1                       (9 bytes)
//	zstd stream of the payload, whose last 32 bytes are SHA-256 of the rest:
//	  uvarint len, fingerprint (the saving server's, app.Fingerprint.String)
//	  uvarint entry count
//	  per entry, least recently used first:
//	    uvarint len, key (build id \0 retriever \0 k \0 query key)
//	    uvarint hit count, then per hit: row int32 LE, score float32 LE
//
// A file is loaded only by a cache whose Config.Fingerprint equals the
// one it was saved with; every entry is checked (key of this build, k ≥
// its hit count, rows in range, finite scores) before any is added.

// fileMagic starts every cache file.
const fileMagic = "RLSCACHE\x01"

// ErrFile marks a cache file that is damaged or not a cache file.
var ErrFile = errors.New("cache: bad cache file")

// ErrFingerprint marks a cache file saved by a server with another
// fingerprint (another index build, encoder, backend or parameters).
var ErrFingerprint = errors.New("cache: cache file of another fingerprint")

// fileEntry is one decoded entry.
type fileEntry struct {
	key  string
	hits []rlsearch.Hit
}

// Save writes every entry to w in the cache file format (least recently
// used first, so that Load restores the order). Safe for concurrent use
// with lookups (the entries are copied under the lock, then written).
func (c *Cache) Save(w io.Writer) error {
	if c == nil {
		return errors.New("cache: Save on a disabled cache")
	}
	var body bytes.Buffer
	putString(&body, c.cfg.Fingerprint)
	c.mu.Lock()
	putUvarint(&body, uint64(c.lru.Len()))
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*entry)
		putString(&body, e.key)
		putUvarint(&body, uint64(len(e.hits)))
		var b [8]byte
		for _, h := range e.hits {
			binary.LittleEndian.PutUint32(b[:4], uint32(h.Row))
			binary.LittleEndian.PutUint32(b[4:], math.Float32bits(h.Score))
			body.Write(b[:])
		}
	}
	c.mu.Unlock()
	sum := sha256.Sum256(body.Bytes())
	body.Write(sum[:])
	if _, err := io.WriteString(w, fileMagic); err != nil {
		return err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return err
	}
	if _, err := zw.Write(body.Bytes()); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}

// SaveFile writes the cache to path atomically (internal/atomicfile: a
// reader never sees a partial file).
func (c *Cache) SaveFile(path string) error {
	return atomicfile.WriteFile(path, 0o644, c.Save)
}

// LoadFile reads a cache file written by SaveFile into c (see Load).
func (c *Cache) LoadFile(path string, rows int) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := c.Load(f, rows)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Load adds the entries of a cache file to c and returns how many it read;
// rows is the index's passage count (every hit's row must be below it).
// The file is decoded and checked whole before anything is added; its
// size after decompression is bounded by 2·MaxBytes + 4 KiB (an entry is charged more than it takes in the file). Entries
// beyond MaxBytes evict the older ones, as any add does. Errors:
// ErrFingerprint naming both fingerprints, ErrFile (wrapped) naming what
// is wrong, the reader's.
func (c *Cache) Load(r io.Reader, rows int) (int, error) {
	if c == nil {
		return 0, errors.New("cache: Load on a disabled cache (--cache-bytes off)")
	}
	fp, entries, err := decodeFile(r, 2*c.cfg.MaxBytes+4096)
	if err != nil {
		return 0, err
	}
	if fp != c.cfg.Fingerprint {
		return 0, fmt.Errorf("%w: the file was saved by a server with fingerprint %q, this one has %q (another index build, encoder, backend or parameters): refusing it", ErrFingerprint, fp, c.cfg.Fingerprint)
	}
	prefix := c.cfg.BuildID + "\x00"
	for i, e := range entries {
		if err := checkEntry(e, prefix, rows); err != nil {
			return 0, fmt.Errorf("%w: entry %d: %v", ErrFile, i, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range entries {
		c.add(e.key, e.hits)
	}
	return len(entries), nil
}

// checkEntry checks an entry's key (build id \0 retriever \0 k \0 query
// key, k ≥ the number of hits) and hits (rows in [0, rows), finite scores).
func checkEntry(e fileEntry, prefix string, rows int) error {
	rest, ok := strings.CutPrefix(e.key, prefix)
	if !ok {
		return fmt.Errorf("key %s is not of this index build", rlsearch.QuoteShort(e.key))
	}
	parts := strings.SplitN(rest, "\x00", 3)
	if len(parts) != 3 || parts[0] == "" {
		return fmt.Errorf("key %s: want retriever, k and query", rlsearch.QuoteShort(e.key))
	}
	k, err := strconv.Atoi(parts[1])
	if err != nil || k < 0 || k < len(e.hits) || strconv.Itoa(k) != parts[1] {
		return fmt.Errorf("key %s: k %q with %d hits", rlsearch.QuoteShort(e.key), parts[1], len(e.hits))
	}
	for _, h := range e.hits {
		if h.Row < 0 || int(h.Row) >= rows {
			return fmt.Errorf("row %d out of range [0, %d)", h.Row, rows)
		}
		if f := float64(h.Score); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("row %d: score %v is not finite", h.Row, h.Score)
		}
	}
	return nil
}

// decodeFile decompresses (at most limit bytes) and parses a cache file:
// the fingerprint it was saved with and its entries. Errors wrap ErrFile.
func decodeFile(r io.Reader, limit int64) (string, []fileEntry, error) {
	magic := make([]byte, len(fileMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != fileMagic {
		return "", nil, fmt.Errorf("%w: not a cache file (want it to start with %q)", ErrFile, fileMagic)
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max(limit, 1<<20))))
	if err != nil {
		return "", nil, err
	}
	defer zr.Close()
	data, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return "", nil, fmt.Errorf("%w: decompress (at most %d bytes, larger than this cache could hold, are read): %v", ErrFile, limit, err)
	}
	if int64(len(data)) > limit {
		return "", nil, fmt.Errorf("%w: more than %d bytes decompressed (larger than this cache could hold)", ErrFile, limit)
	}
	return parsePayload(data)
}

// parsePayload checks the checksum and parses the decompressed payload.
func parsePayload(data []byte) (string, []fileEntry, error) {
	if len(data) < sha256.Size {
		return "", nil, fmt.Errorf("%w: truncated (%d bytes)", ErrFile, len(data))
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return "", nil, fmt.Errorf("%w: checksum mismatch (the file is damaged)", ErrFile)
	}
	p := parser{b: body}
	fp := p.str("fingerprint")
	n := p.uvarint("entry count")
	if p.err == nil && n > uint64(len(p.b))/2 { // an entry takes at least 2 bytes
		p.fail("entry count %d for %d bytes", n, len(p.b))
	}
	var entries []fileEntry
	for i := uint64(0); i < n && p.err == nil; i++ {
		key := p.str("key")
		nh := p.uvarint("hit count")
		if p.err == nil && nh > uint64(len(p.b))/8 {
			p.fail("entry %d: %d hits for %d bytes", i, nh, len(p.b))
		}
		if p.err != nil {
			break
		}
		hits := make([]rlsearch.Hit, nh)
		for j := range hits {
			hits[j] = rlsearch.Hit{Row: int32(binary.LittleEndian.Uint32(p.b[:4])), Score: math.Float32frombits(binary.LittleEndian.Uint32(p.b[4:8]))}
			p.b = p.b[8:]
		}
		entries = append(entries, fileEntry{key: key, hits: hits})
	}
	if p.err == nil && len(p.b) != 0 {
		p.fail("%d bytes after the last entry", len(p.b))
	}
	if p.err != nil {
		return "", nil, p.err
	}
	return fp, entries, nil
}

type parser struct {
	b   []byte
	err error
}

func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s", ErrFile, fmt.Sprintf(format, args...))
	}
}

func (p *parser) uvarint(what string) uint64 {
	if p.err != nil {
		return 0
	}
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.fail("bad %s", what)
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *parser) str(what string) string {
	n := p.uvarint(what + " length")
	if p.err == nil && n > uint64(len(p.b)) {
		p.fail("%s of %d bytes, %d left", what, n, len(p.b))
	}
	if p.err != nil {
		return ""
	}
	s := string(p.b[:n])
	p.b = p.b[n:]
	return s
}

func putUvarint(b *bytes.Buffer, v uint64) {
	var tmp [binary.MaxVarintLen64]byte
	b.Write(tmp[:binary.PutUvarint(tmp[:], v)])
}

func putString(b *bytes.Buffer, s string) {
	putUvarint(b, uint64(len(s)))
	b.WriteString(s)
}
