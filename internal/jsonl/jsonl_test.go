package jsonl

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReaderLineNumbers(t *testing.T) {
	in := "{\"a\":1}\n\n   \n{\"a\":2}\r\n  {\"a\":3}  \n{\"a\":4}"
	r := NewReader(strings.NewReader(in), "x.jsonl", 0)
	type got struct {
		line int
		raw  string
	}
	var gs []got
	if err := r.Each(func(n int, raw []byte) error { gs = append(gs, got{n, string(raw)}); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []got{{1, `{"a":1}`}, {4, `{"a":2}`}, {5, `{"a":3}`}, {6, `{"a":4}`}}
	if len(gs) != len(want) {
		t.Fatalf("got %v, want %v (blank lines skipped, numbering kept)", gs, want)
	}
	for i := range want {
		if gs[i] != want[i] {
			t.Fatalf("line %d: got %v, want %v", i, gs[i], want[i])
		}
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the end: %v, want io.EOF", err)
	}
}

func TestReaderOversizeLine(t *testing.T) {
	in := "{}\n{}\n" + strings.Repeat("x", 100) + "\n{}\n"
	r := NewReader(strings.NewReader(in), "big.jsonl", 64)
	err := r.Each(func(int, []byte) error { return nil })
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("err %v, want ErrLineTooLong", err)
	}
	for _, s := range []string{"big.jsonl", "line 3", "64 bytes"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not name %q", err, s)
		}
	}
	// The limit itself is accepted.
	r = NewReader(strings.NewReader(strings.Repeat("y", 64)+"\n"), "", 64)
	if err := r.Each(func(int, []byte) error { return nil }); err != nil {
		t.Fatalf("a line of exactly the limit: %v", err)
	}
}

func TestCallbackErrorAndErrorf(t *testing.T) {
	r := NewReader(strings.NewReader("1\n2\n"), "in", 0)
	err := r.Each(func(n int, raw []byte) error {
		if n == 2 {
			return r.Errorf(n, "bad %s", raw)
		}
		return nil
	})
	if err == nil || err.Error() != "in line 2: bad 2" {
		t.Fatalf("err %v, want \"in line 2: bad 2\"", err)
	}
}

func TestDecodeStrict(t *testing.T) {
	var v struct{ A int }
	for _, tc := range []struct {
		in string
		ok bool
	}{{`{"A":1}`, true}, {`{"A":1} {"A":2}`, false}, {`{"B":1}`, false}, {`{"A":"x"}`, false}} {
		if err := DecodeStrict([]byte(tc.in), &v); (err == nil) != tc.ok {
			t.Errorf("DecodeStrict(%s) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
	// Files decode like HTTP bodies (fresh-user report: `rlsearch
	// programs` accepted "Code" in any capitalisation, the endpoint not).
	var req struct {
		Code string `json:"code"`
	}
	for _, in := range []string{`{"Code": "print(1)"}`, `{"CODE": "print(1)"}`, "{\"code\": \"\xff\"}", `{"code": "x"}]]]`} {
		if err := DecodeStrict([]byte(in), &req); err == nil {
			t.Errorf("DecodeStrict(%q) accepted", in)
		}
	}
	if err := DecodeStrict([]byte(`{"code": "print(1)"}`), &req); err != nil || req.Code != "print(1)" {
		t.Errorf("DecodeStrict of a valid line: %v, %+v", err, req)
	}
}

func TestWriteFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "o.jsonl")
	err := WriteFile(p, nil, func(w *Writer) error {
		w.Write(map[string]string{"a": "<b>"})
		return w.Write(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "{\"a\":\"<b>\"}\n1\n" {
		t.Fatalf("file %q, want two lines without HTML escaping", got)
	}
	var sb strings.Builder
	if err := WriteFile("-", &sb, func(w *Writer) error { return w.Write("s") }); err != nil || sb.String() != "\"s\"\n" {
		t.Fatalf("stdout got %q, %v", sb.String(), err)
	}
	boom := errors.New("boom")
	if err := WriteFile(p, nil, func(w *Writer) error { w.Write(2); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if got2, _ := os.ReadFile(p); string(got2) != string(got) {
		t.Fatalf("a failed write changed the file to %q", got2)
	}
}
