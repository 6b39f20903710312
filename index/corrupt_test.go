package index

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/rlsearch/rlsearch/ann/vecfile"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestBuildZstdLeadingSkippableFrame (issue 25, item 1): `rlsearch index
// --corpus c.jsonl.zst` over the issue's repro (a skippable frame, then two
// frames of one line each) indexes both passages, and the docstore reads
// them back; a compressed --vectors file is refused naming the
// compression, before the corpus is read.
func TestBuildZstdLeadingSkippableFrame(t *testing.T) {
	ctx := context.Background()
	one := `{"id": "p1", "contents": "\"Paris\"\nParis is the capital and largest city of France."}` + "\n"
	two := `{"id": "p2", "title": "Berlin", "text": "Berlin is the capital of Germany."}` + "\n"
	data := append(append([]byte{}, testutil.IssueSkippableFrame...), testutil.ZstdFrames(one, two)...)
	tmp := t.TempDir()
	c := filepath.Join(tmp, "c.jsonl.zst")
	if err := os.WriteFile(c, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "ix")
	meta, err := Build(ctx, BuildConfig{Corpus: c, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d0, err0 := ix.Doc(0)
	d1, err1 := ix.Doc(1)
	if meta.NumDocs != 2 || err0 != nil || err1 != nil || d0.ID != "p1" || d1.ID != "p2" || d1.Contents != "\"Berlin\"\nBerlin is the capital of Germany." {
		t.Fatalf("num_docs %d; docstore rows: %+v (%v), %+v (%v)", meta.NumDocs, d0, err0, d1, err1)
	}
	hits, err := ix.Retrievers()["bm25"].Retrieve(ctx, []string{"capital of Germany"}, 1)
	if err != nil || len(hits[0]) != 1 || hits[0][0].Row != 1 {
		t.Fatalf("bm25 hits %v, %v; want row 1", hits, err)
	}

	// --vectors: a .fvecs of two 2-d rows, zstd with a leading skippable frame.
	var fv []byte
	for _, row := range [][2]float32{{1, 0}, {0, 1}} {
		fv = binary.LittleEndian.AppendUint32(fv, 2)
		for _, x := range row {
			fv = binary.LittleEndian.AppendUint32(fv, math.Float32bits(x))
		}
	}
	vz := filepath.Join(tmp, "v.fvecs")
	if err := os.WriteFile(vz, append(testutil.SkippableFrame(0, []byte("pz")), testutil.ZstdFrames(string(fv))...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Build(ctx, BuildConfig{Corpus: c, Dir: filepath.Join(tmp, "ix2"), Vectors: vz, VectorsEncoder: "e5"})
	if !errors.Is(err, vecfile.ErrUnsupported) || !strings.Contains(err.Error(), "zstd-compressed") || !strings.Contains(err.Error(), "zstd -d") {
		t.Fatalf("compressed --vectors: %v, want vecfile.ErrUnsupported naming zstd", err)
	}
}

// corruptBase is the corpus the corruptions start from: 12 passages in
// both shapes, non-ASCII text, a blank line, an empty passage.
func corruptBase() []string {
	var lines []string
	for i := range 12 {
		switch i % 4 {
		case 0:
			lines = append(lines, fmt.Sprintf(`{"id": "w%d", "contents": "\"Title %d\"\nPassage %d about Zürich, 東京 and the river %d."}`, i, i, i, i%5))
		case 1:
			lines = append(lines, fmt.Sprintf(`{"id": %d, "title": "T%d", "text": "numeric id passage %d, café"}`, 1000+i, i, i))
		case 2:
			lines = append(lines, "")
		default:
			lines = append(lines, fmt.Sprintf(`{"id": "e%d", "title": "Empty %d", "text": "  "}`, i, i), fmt.Sprintf(`{"id": "x%d", "title": "X", "text": "word%d"}`, i, i))
		}
	}
	return lines
}

// corrupt makes one damaged corpus file from the base, seeded: a plain,
// gzip or zstd file (zstd possibly in several frames with skippable frames
// of random lengths before, between and after them), then random bytes
// replaced, a truncation, or a wrong compression magic (or none: some
// cases stay valid, so the oracle must also agree on success).
func corrupt(t testing.TB, rng *rand.Rand) []byte {
	lines := corruptBase()
	text := strings.Join(lines, "\n") + "\n"
	if rng.IntN(4) == 0 {
		text = "\xef\xbb\xbf" + text // byte-order mark
	}
	var b []byte
	switch rng.IntN(3) {
	case 0:
		b = []byte(text)
	case 1:
		b = testutil.Gzip(t, text)
	default:
		cut := rng.IntN(len(text) + 1)
		for _, part := range []string{text[:cut], text[cut:]} {
			if rng.IntN(2) == 0 {
				p := make([]byte, rng.IntN(64))
				for i := range p {
					p[i] = byte(rng.UintN(256))
				}
				b = append(b, testutil.SkippableFrame(byte(rng.UintN(16)), p)...)
			}
			b = append(b, testutil.ZstdFrames(part)...)
		}
		if rng.IntN(3) == 0 {
			b = append(b, testutil.SkippableFrame(byte(rng.UintN(16)), []byte("tail"))...)
		}
	}
	magics := [][]byte{{0x1f, 0x8b}, {0x28, 0xb5, 0x2f, 0xfd}, {0x50, 0x2a, 0x4d, 0x18}, []byte("\xfd7zXZ\x00"), []byte("BZh9"), {0x04, 0x22, 0x4d, 0x18}, []byte("PK\x03\x04"), {'{'}}
	switch rng.IntN(5) {
	case 0: // random bytes replaced
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] = byte(rng.UintN(256))
		}
	case 1: // truncated
		b = b[:rng.IntN(len(b))]
	case 2: // wrong compression magic
		m := magics[rng.IntN(len(magics))]
		b = append(append([]byte{}, m...), b[min(len(m), len(b)):]...)
	case 3: // a printable byte replaced: mostly JSON damage, not compression damage
		if len(b) > 0 {
			b[rng.IntN(len(b))] = " \"{}:,\\x0"[rng.IntN(9)]
		}
	}
	return b
}

// oracleLine mirrors the corpus line shape for the oracle.
type oracleLine struct {
	ID       json.RawMessage `json:"id"`
	Contents *string         `json:"contents"`
	Title    *string         `json:"title"`
	Text     *string         `json:"text"`
}

// oracleMax bounds the oracle's decompressed text: a fuzzed .zst or .gz
// of a few KB can expand to gigabytes ("too large": not built).
const oracleMax = 8 << 20

// oracle decides what indexing data must give, independently of package
// corpus: the whole stream decompressed at once (zstd DecodeAll, gzip
// io.ReadAll; the format told by the first bytes), then split at '\n'.
// It returns the passages' ids, or the kind of failure: "compression"
// (not a readable stream), "line N" (the first bad line), "empty" (no
// passage).
func oracle(b []byte) (ids []string, fail string) {
	head := b[:min(len(b), 8)]
	text := b
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, "compression"
		}
		if text, err = io.ReadAll(io.LimitReader(zr, oracleMax+1)); err != nil {
			return nil, "compression"
		}
		if len(text) > oracleMax {
			return nil, "too large"
		}
	case bytes.HasPrefix(head, []byte{0x28, 0xb5, 0x2f, 0xfd}) || len(head) >= 4 && head[0]>>4 == 5 && bytes.Equal(head[1:4], []byte{0x2a, 0x4d, 0x18}):
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(oracleMax))
		defer dec.Close()
		var err error
		if text, err = dec.DecodeAll(b, nil); errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, "too large"
		} else if err != nil {
			return nil, "compression"
		}
	case bytes.HasPrefix(head, []byte("\xfd7zXZ\x00")), bytes.HasPrefix(head, []byte("BZh")) && len(head) > 3 && head[3] >= '1' && head[3] <= '9',
		bytes.HasPrefix(head, []byte{0x04, 0x22, 0x4d, 0x18}), bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return nil, "unsupported"
	}
	seen := map[string]bool{}
	for n, raw := range bytes.SplitAfter(text, []byte("\n")) {
		if len(raw) == 0 {
			continue // after the last '\n'
		}
		if n == 0 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		bad := fmt.Sprintf("line %d", n+1)
		var l oracleLine
		if !utf8.Valid(raw) || json.Unmarshal(raw, &l) != nil {
			return nil, bad
		}
		var id string
		var num json.Number
		switch {
		case json.Unmarshal(l.ID, &id) == nil && id != "" && len(l.ID) > 0 && l.ID[0] == '"':
		case len(l.ID) > 0 && l.ID[0] != '"' && json.Unmarshal(l.ID, &num) == nil:
			id = num.String()
		default:
			return nil, bad
		}
		var passageText string
		switch {
		case l.Contents != nil:
			_, passageText, _ = strings.Cut(*l.Contents, "\n")
			if !strings.Contains(*l.Contents, "\n") {
				passageText = *l.Contents
			}
		case l.Text != nil || l.Title != nil:
			if l.Text != nil {
				passageText = *l.Text
			}
		default:
			return nil, bad
		}
		if strings.TrimFunc(passageText, unicode.IsSpace) == "" {
			continue
		}
		if seen[id] {
			return nil, bad
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, "empty"
	}
	return ids, ""
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// checkCorruptBuild builds an index from data and checks it against the
// oracle: never a panic (a panic fails the test), never a partial index
// (a stream that does not decompress whole, or a bad line, fails the build
// and leaves nothing), and an error naming the first bad line and a byte
// offset; a valid file indexes exactly the oracle's passages.
//
// A file the oracle cannot decompress within oracleMax ("too large": a
// frame header damaged into a huge window, or a decompression bomb) is
// built only when bombs is set, and then must fail or succeed cleanly:
// no panic, and a failure names a byte offset and leaves nothing.
func checkCorruptBuild(t *testing.T, dir string, data []byte, bombs bool) {
	t.Helper()
	ctx := context.Background()
	c := filepath.Join(dir, "c.jsonl")
	if err := os.WriteFile(c, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ids, fail := oracle(data)
	if fail == "too large" && !bombs {
		return // the fuzzer's bombs can expand to gigabytes; TestLineTooLong bounds one line
	}
	out := filepath.Join(dir, "ix")
	defer os.RemoveAll(out)
	meta, err := Build(ctx, BuildConfig{Corpus: c, Dir: out})
	if fail == "too large" {
		if err != nil {
			if _, serr := os.Stat(out); !os.IsNotExist(serr) || !strings.Contains(err.Error(), "byte offset") {
				t.Fatalf("error %q (left %s: %v), want a byte offset and nothing left", err, out, serr)
			}
		}
		t.Logf("beyond the oracle: %v", err)
		return
	}
	if fail == "" {
		if err != nil {
			t.Fatalf("build failed, the oracle reads %d passages: %v", len(ids), err)
		}
		if meta.NumDocs != len(ids) {
			t.Fatalf("indexed %d passages, the oracle reads %d", meta.NumDocs, len(ids))
		}
		ix, err := Open(ctx, out, OpenConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		for row, id := range ids {
			if d, err := ix.Doc(int32(row)); err != nil || d.ID != id {
				t.Fatalf("row %d: %q (%v), the oracle reads %q", row, d.ID, err, id)
			}
		}
		return
	}
	if err == nil {
		t.Fatalf("indexed %d passages, the oracle says %s", meta.NumDocs, fail)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Fatalf("failed build left %s (%v)", out, serr)
	}
	msg := err.Error()
	switch fail {
	case "empty":
		if !strings.Contains(msg, "no non-empty passages") {
			t.Fatalf("error %q, want no non-empty passages", msg)
		}
	case "unsupported":
		if !strings.Contains(msg, "-compressed data (magic") || !strings.Contains(msg, "at byte 0") {
			t.Fatalf("error %q, want the compression format named", msg)
		}
	case "compression":
		// The streaming reader may meet a bad line before the damage.
		if !strings.Contains(msg, "byte offset") || !lineRE.MatchString(msg) && !strings.Contains(msg, "header at byte offset 0") {
			t.Fatalf("error %q, want a line and a byte offset", msg)
		}
	default:
		m := lineRE.FindStringSubmatch(msg)
		if m == nil || "line "+m[1] != fail || !strings.Contains(msg, "byte offset") {
			t.Fatalf("error %q, want %s and a byte offset", msg, fail)
		}
	}
}

// TestBuildCorruptedCorpora indexes 1,000 seeded corruptions of one corpus
// (issue 25): random bytes replaced, truncations, wrong compression
// magics, zstd skippable frames of random lengths.
func TestBuildCorruptedCorpora(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	rng := rand.New(rand.NewPCG(25, 1))
	kinds := map[string]int{}
	cases := make([][]byte, n)
	for i := range cases {
		cases[i] = corrupt(t, rng)
		_, fail := oracle(cases[i])
		kinds[strings.Fields(fail + " ok")[0]]++
	}
	t.Logf("oracle outcomes: %v", kinds)
	for _, k := range []string{"ok", "line", "compression", "unsupported"} { // and a few "too large"
		if kinds[k] == 0 {
			t.Errorf("no case of outcome %q among %d: the generator lost a kind", k, n)
		}
	}
	// Eight builds at a time: most of a build of 12 passages is waiting
	// for fsync.
	for w := range 8 {
		t.Run(fmt.Sprint("worker ", w), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for i := w; i < n; i += 8 {
				t.Run(fmt.Sprint(i), func(t *testing.T) { checkCorruptBuild(t, dir, cases[i], true) })
			}
		})
	}
}

// FuzzBuildCorpus: the same property for any file (the seeds are kept in
// testdata/fuzz/FuzzBuildCorpus; a crash found becomes a named test).
func FuzzBuildCorpus(f *testing.F) {
	rng := rand.New(rand.NewPCG(25, 2))
	for range 8 {
		f.Add(corrupt(f, rng))
	}
	f.Add([]byte(strings.Join(corruptBase(), "\n")))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		checkCorruptBuild(t, dir, data, false)
	})
}
