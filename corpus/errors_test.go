package corpus

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/decompress"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// TestZstdLeadingSkippableFrame is issue 25's repro: a .jsonl.zst that
// starts with a skippable frame (pzstd writes one) was read as plain JSONL
// and failed with "bad line 1: invalid character 'P'". It is zstd, as
// `zstd -dc` reads it.
func TestZstdLeadingSkippableFrame(t *testing.T) {
	skip := testutil.IssueSkippableFrame
	data := bytes.Join([][]byte{skip, testutil.ZstdFrames(`{"id": "a", "contents": "\"A\"\nfirst"}` + "\n"), testutil.ZstdFrames(`{"id": "b", "contents": "\"B\"\nsecond"}` + "\n")}, nil)
	path := filepath.Join(t.TempDir(), "c.jsonl.zst")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(t, r)
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].Text() != "second" {
		t.Fatalf("got %+v, %v; want passages a and b", got, err)
	}
}

// TestByteErrors: what is wrong is said in the terms of the file, the
// line and the byte offset, in the line and in the (decompressed) text.
func TestByteErrors(t *testing.T) {
	good := `{"id": "a", "text": "x"}` + "\n" // 25 bytes
	for _, tc := range []struct {
		name string
		in   []byte
		want string
		is   error
	}{
		// Issue 25: a stray 0xFF was "invalid character 'ÿ'".
		{"invalid byte outside a string", []byte(good + `{"id": "b",` + "\xff" + `"text": "y"}` + "\n"),
			"bad line 2: invalid UTF-8 (byte 0xff) at byte offset 11 of the line, byte offset 36 of the file", ErrBadLine},
		// encoding/json would have replaced it with U+FFFD silently.
		{"invalid byte inside a string", []byte(good + `{"id": "b", "text": "caf` + "\xe9" + `"}` + "\n"),
			"bad line 2: invalid UTF-8 (byte 0xe9) at byte offset 24 of the line, byte offset 49 of the file", ErrBadLine},
		{"truncated sequence at the end", []byte(`{"id": "b", "text": "` + "\xe2\x82"),
			"bad line 1: invalid UTF-8 (byte 0xe2) at byte offset 21 of the line, byte offset 21 of the file", ErrBadLine},
		{"offsets count a byte-order mark and indentation", []byte("\xef\xbb\xbf  {\"id\": 1,}\n"),
			"bad line 1: invalid character '}' looking for beginning of object key string at byte offset 15 of the line, byte offset 15 of the file", ErrBadLine},
		{"syntax", []byte(good + "\n" + "{\"id\": \"c\" \"text\": \"z\"}\n"),
			"bad line 3: invalid character '\"' after object key:value pair at byte offset 11 of the line, byte offset 37 of the file", ErrBadLine},
		{"line ends inside the value", []byte(good + `{"id": "b", "text": "y`),
			"bad line 2: unexpected end of JSON input at byte offset 22 of the line, byte offset 47 of the file", ErrBadLine},
		{"missing id names where the line starts", []byte(good + "\n" + `{"text": "y"}`),
			`bad line 3: missing "id" (line 3 starts at byte offset 26 of the file)`, ErrBadLine},
		{"duplicate names where the line starts", []byte(good + good),
			`duplicate id "a" on line 2 (first on line 1) (line 2 starts at byte offset 25 of the file)`, ErrDuplicateID},
		{"zstd offsets are of the decompressed text", testutil.ZstdFrames(good + "{\xff}\n"),
			"bad line 2: invalid UTF-8 (byte 0xff) at byte offset 1 of the line, byte offset 26 of the decompressed zstd text", ErrBadLine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(t, r)
			if !errors.Is(err, tc.is) || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

// TestUnsupportedCompression: an xz corpus is refused naming the format,
// not parsed as text.
func TestUnsupportedCompression(t *testing.T) {
	_, err := NewReader(strings.NewReader("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46"))
	if !errors.Is(err, decompress.ErrUnsupported) || !strings.Contains(err.Error(), "xz-compressed") {
		t.Fatalf("error %v, want decompress.ErrUnsupported naming xz", err)
	}
}

// TestLineTooLong: a small .zst that expands to one line of more than
// MaxLineBytes (a decompression bomb, or a file without newlines) is an
// error naming the line, not all of memory.
func TestLineTooLong(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxLineBytes+1)
	data := testutil.ZstdFrames(`{"id": "a", "text": "x"}` + "\n" + string(big))
	if len(data) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed", len(data))
	}
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	_, err = readAll(t, r)
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 2, which starts at byte offset 25 of the decompressed zstd text") {
		t.Fatalf("error %v, want ErrLineTooLong naming line 2", err)
	}
}
