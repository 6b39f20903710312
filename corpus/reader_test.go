package corpus

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func readAll(t *testing.T, r *Reader) ([]Passage, error) {
	t.Helper()
	var out []Passage
	for {
		p, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
}

const sample = `{"id": "a", "contents": "\"Alpha\"\nfirst passage"}
{"id": "b", "title": "Beta", "text": "second passage"}

{"id": 7, "title": "Seven", "text": "numeric id"}
{"id": "e", "title": "Empty", "text": "   "}
{"id": "c", "contents": "\"Gamma\"\nthird", "title": "ignored", "text": "ignored"}
`

func TestReaderShapesAndCompression(t *testing.T) {
	var gz, zs bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write([]byte(sample))
	gw.Close()
	zw, _ := zstd.NewWriter(&zs)
	zw.Write([]byte(sample))
	zw.Close()
	for _, tc := range []struct {
		name string
		data []byte
	}{{"plain", []byte(sample)}, {"gzip", gz.Bytes()}, {"zstd", zs.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			want := []struct{ id, title, text string }{
				{"a", "Alpha", "first passage"},
				{"b", "Beta", "second passage"},
				{"7", "Seven", "numeric id"},
				{"c", "Gamma", "third"},
			}
			if len(got) != len(want) {
				t.Fatalf("got %d passages, want %d", len(got), len(want))
			}
			for i, w := range want {
				if got[i].ID != w.id || got[i].Title() != w.title || got[i].Text() != w.text {
					t.Errorf("passage %d = (%q,%q,%q), want (%q,%q,%q)", i, got[i].ID, got[i].Title(), got[i].Text(), w.id, w.title, w.text)
				}
			}
			if r.Skipped() != 1 {
				t.Errorf("Skipped() = %d, want 1 (the whitespace-only passage)", r.Skipped())
			}
			if got[3].Line != 6 {
				t.Errorf("line of c = %d, want 6", got[3].Line)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		is             error
	}{
		{"not json", "{\"id\":\"a\",\"contents\":\"x\"}\n{oops\n", "line 2", ErrBadLine},
		{"no id", `{"contents": "\"T\"\nx"}`, `line 1: missing "id"`, ErrBadLine},
		{"bool id", `{"id": true, "contents": "x"}`, `"id" must be a string or a number`, ErrBadLine},
		{"empty id", `{"id": "", "contents": "x"}`, `empty "id"`, ErrBadLine},
		{"no text", `{"id": "a"}`, `no "contents"`, ErrBadLine},
		{"array", `[1,2]`, "line 1: want a JSON object, got array", ErrBadLine},
		{"number contents", `{"id": "a", "contents": 5}`, `line 1: "contents" must be a string, got number`, ErrBadLine},
		{"number url", `{"id": "a", "contents": "x", "url": 5}`, `line 1: "url" must be a string, got number`, ErrBadLine},
		{"duplicate", "{\"id\":\"a\",\"text\":\"x\"}\n{\"id\":\"b\",\"text\":\"y\"}\n{\"id\":\"a\",\"text\":\"z\"}\n", `"a" on line 3 (first on line 1)`, ErrDuplicateID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(t, r)
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want %v containing %q", err, tc.is, tc.want)
			}
		})
	}
}

func TestByteOrderMark(t *testing.T) {
	r, _ := NewReader(strings.NewReader("\xef\xbb\xbf" + `{"id": "a", "text": "x"}` + "\n"))
	got, err := readAll(t, r)
	if err != nil || len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("BOM-prefixed corpus: %v %v", got, err)
	}
}

func TestTruncatedGzip(t *testing.T) {
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(gw, `{"id": "p%d", "text": "passage number %d with some words"}`+"\n", i, i)
	}
	gw.Close()
	cut := gz.Bytes()[:gz.Len()/2]
	r, _ := NewReader(bytes.NewReader(cut))
	_, err := readAll(t, r)
	if err == nil || !strings.Contains(err.Error(), "truncated or corrupt") || errors.Is(err, ErrBadLine) {
		t.Fatalf("truncated gzip: %v, want a read error saying truncated", err)
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Fatalf("error %v, want one naming the file", err)
	}
}

// TestRealCorpus reads ../shared/data/wiki_multihop/corpus.jsonl in place.
func TestRealCorpus(t *testing.T) {
	path := filepath.Join(DataDir(), "wiki_multihop", "corpus.jsonl")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no shared data: %v", err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 18175 {
		t.Errorf("read %d passages, want 18175 (skipped %d)", len(got), r.Skipped())
	}
	if got[0].ID != "wiki-000001" || got[0].Title() != "Robin Hood (2018 film)" {
		t.Errorf("first passage = %q %q", got[0].ID, got[0].Title())
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte(`{"id":1e400,"text":"x"}`))
	f.Add([]byte("\x1f\x8b garbage"))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for i := 0; i < 1000; i++ {
			p, err := r.Next()
			if err != nil {
				return
			}
			if p.ID == "" || strings.TrimSpace(p.Text()) == "" {
				t.Fatalf("returned an unusable passage %+v", p)
			}
		}
	})
}

// TestDuplicateIDsAtScale: the hashed id set reports exactly the one
// duplicate among 50,001 similar ids (oracle: the ids' construction).
func TestDuplicateIDsAtScale(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50000; i++ {
		fmt.Fprintf(&b, "{\"id\": \"wiki-%07d\", \"text\": \"t\"}\n", i)
	}
	b.WriteString("{\"id\": \"wiki-0031337\", \"text\": \"again\"}\n")
	r, err := NewReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			t.Fatal("no duplicate reported")
		}
		if err != nil {
			if !errors.Is(err, ErrDuplicateID) || n != 50000 || !strings.Contains(err.Error(), `"wiki-0031337" on line 50001 (first on line 31337)`) {
				t.Fatalf("after %d passages: %v", n, err)
			}
			return
		}
		n++
	}
}
