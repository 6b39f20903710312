package jsonl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPipe(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jsonl"), filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(in, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	upper := func(r io.Reader, name string, w io.Writer) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, name+":"+strings.ToUpper(string(b)))
		return err
	}
	if err := Pipe(in, out, nil, upper); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != in+":A\nB\n" {
		t.Errorf("out file %q, want the input's name and its lines upper-cased", b)
	}
	var stdout bytes.Buffer
	if err := Pipe(in, "-", &stdout, upper); err != nil || stdout.String() != in+":A\nB\n" {
		t.Errorf(`out "-": %v, stdout %q`, err, stdout.String())
	}
	boom := errors.New("boom")
	failed := filepath.Join(dir, "failed.jsonl")
	if err := Pipe(in, failed, nil, func(io.Reader, string, io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("fn error: %v, want boom", err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Error("a failed Pipe left its output file")
	}
	if err := Pipe(filepath.Join(dir, "none"), "-", &stdout, upper); err == nil || !strings.Contains(err.Error(), "none") {
		t.Errorf("missing input: %v, want an error naming it", err)
	}
}
