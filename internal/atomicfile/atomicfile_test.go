package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(w.TempName()) != dir {
		t.Fatalf("temp %s not in the destination's directory %s", w.TempName(), dir)
	}
	w.WriteString("new")
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("before Commit %s = %q, want the old content", p, got)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new" || fi.Mode().Perm() != 0o644 {
		t.Fatalf("after Commit: %q mode %v, want \"new\" 0644", got, fi.Mode().Perm())
	}
	if n := dirNames(t, dir); len(n) != 1 {
		t.Fatalf("directory holds %v, want only f.json", n)
	}
	if err := w.Commit(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Commit: %v, want ErrClosed", err)
	}
	if err := w.Abort(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Abort after Commit: %v, want ErrClosed", err)
	}
}

func TestAbortRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	w, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteString("partial")
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("after Abort the directory holds %v, want nothing", n)
	}
}

// TestCrashLeavesNoPartialFile: a writer that stops half-way (its process
// dies: no Commit, no Abort) leaves the destination as it was; only a
// temporary file named out.jsonl.tmp-* remains, which no reader opens.
func TestCrashLeavesNoPartialFile(t *testing.T) {
	for _, existed := range []bool{false, true} {
		dir := t.TempDir()
		p := filepath.Join(dir, "out.jsonl")
		if existed {
			os.WriteFile(p, []byte("complete old\n"), 0o644)
		}
		w, err := Create(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w.WriteString("half of the ne")
		w.File.Close() // the crash: the descriptor goes away, nothing renames
		got, err := os.ReadFile(p)
		switch {
		case existed && string(got) != "complete old\n":
			t.Fatalf("existing destination now %q, want the old content", got)
		case !existed && !errors.Is(err, os.ErrNotExist):
			t.Fatalf("destination exists after a crash (%q, %v), want none", got, err)
		}
		for _, n := range dirNames(t, dir) {
			if n != "out.jsonl" && !strings.HasPrefix(n, "out.jsonl.tmp-") {
				t.Fatalf("leftover %q is not a temporary file of out.jsonl", n)
			}
		}
	}
}

func TestWriteFileErrorAborts(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	boom := errors.New("boom")
	err := WriteFile(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("x"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFile: %v, want the callback's error", err)
	}
	if n := dirNames(t, dir); len(n) != 0 {
		t.Fatalf("directory holds %v after a failed write, want nothing", n)
	}
	if err := WriteFile(p, 0o600, func(w io.Writer) error { _, err := w.Write([]byte("ok")); return err }); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "ok" {
		t.Fatalf("content %q, want ok", got)
	}
}

func TestCreateMissingDir(t *testing.T) {
	if _, err := Create(filepath.Join(t.TempDir(), "no", "f"), 0o644); err == nil {
		t.Fatal("Create in a missing directory succeeded, want an error")
	}
}
