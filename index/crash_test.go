//go:build unix

package index

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childEnv makes the test binary run one Build (corpus and directory from
// the environment) instead of the tests: TestCrashLeftovers kills it with
// SIGKILL in the middle of that build.
const childEnv = "RLSEARCH_INDEX_TEST_CHILD_BUILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		corpusPath, dir, _ := strings.Cut(spec, string(os.PathListSeparator))
		if _, err := Build(context.Background(), BuildConfig{Corpus: corpusPath, Dir: dir}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func passages(n int, prefix string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"id": "%s%d", "title": "T%d", "text": "passage %d about topic %d and word%d"}`+"\n", prefix, i, i, i, i%97, i%13)
	}
	return b.String()
}

// waitFor polls cond every 10 ms until it holds or 60 s pass (a deadline
// for a stuck child, not a timing assertion).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func tmpSiblings(t *testing.T, parent, base string) []string {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if staleName(base).MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestCrashLeftovers runs a child build that reads its corpus from a FIFO,
// so it is reliably mid-build (it has indexed 3,000 passages and waits for
// more); checks that the index directory is not visible yet and that a
// concurrent build leaves the live build's directory alone; kills the
// child with SIGKILL; checks the leftovers are there; then checks that the
// next build removes them (and a legacy lockless leftover and a stale
// .old), leaves unrelated names alone, and publishes a complete index.
func TestCrashLeftovers(t *testing.T) {
	ctx := context.Background()
	parent := t.TempDir()
	dir := filepath.Join(parent, "idx")
	fifo := filepath.Join(t.TempDir(), "corpus.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"="+fifo+string(os.PathListSeparator)+dir)
	var childErr bytes.Buffer
	child.Stderr = &childErr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			child.Process.Kill()
			child.Wait()
		}
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the child to open it
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(passages(3000, "c")); err != nil {
		t.Fatal(err)
	}
	// The child holds its lock and has its temporary directory with a
	// docstore being written.
	var live string
	waitFor(t, "the child's temporary directory", func() bool {
		for _, name := range tmpSiblings(t, parent, "idx") {
			if !strings.HasSuffix(name, ".lock") {
				m, _ := filepath.Glob(filepath.Join(parent, name, DocsFile+".tmp-*"))
				if len(m) == 1 {
					live = name
					return true
				}
			}
		}
		return false
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("index directory visible mid-build: %v", err)
	}

	// A concurrent build of the same directory must not touch the live one.
	var log bytes.Buffer
	if _, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, passages(50, "a")), Dir: dir, Log: &log}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(parent, live)); err != nil {
		t.Fatalf("a concurrent build removed the live build's directory: %v (log %q)", err, log.String())
	}
	if log.Len() != 0 {
		t.Errorf("concurrent build logged removals: %q", log.String())
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	killed = true
	for _, name := range []string{live, live + ".lock"} {
		if _, err := os.Stat(filepath.Join(parent, name)); err != nil {
			t.Fatalf("expected leftover %s after SIGKILL: %v (child stderr %q)", name, err, childErr.String())
		}
	}

	// More leftovers, and names that are not ours.
	mk := func(name string, isDir bool) {
		p := filepath.Join(parent, name)
		if isDir {
			os.MkdirAll(p, 0o755)
			os.WriteFile(filepath.Join(p, "f"), []byte("12345"), 0o644)
		} else {
			os.WriteFile(p, []byte("x"), 0o644)
		}
	}
	mk("idx.tmp-999", true)     // legacy build, no lock
	mk("idx.tmp-555.old", true) // replaced index moved aside, lock not held
	mk("idx.tmp-555.lock", false)
	keep := []string{"idx.tmp-notes", "idx.tmp-12.txt", "idxx.tmp-5", "other.tmp-7", "idx.tmp-", "idx.old"}
	for i, name := range keep {
		mk(name, i%2 == 0)
	}
	// A lock held by someone (here by this process) protects its directory.
	mk("idx.tmp-777", true)
	mk("idx.tmp-777.lock", false)
	held, err := os.OpenFile(filepath.Join(parent, "idx.tmp-777.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := lockFile(held, false); err != nil {
		t.Fatal(err)
	}

	log.Reset()
	meta, err := Build(ctx, BuildConfig{Corpus: writeCorpus(t, passages(200, "b")), Dir: dir, Force: true, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	got := tmpSiblings(t, parent, "idx")
	if want := []string{"idx.tmp-777", "idx.tmp-777.lock"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the next build, build leftovers %v, want only the held %v", got, want)
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(parent, name)); err != nil {
			t.Errorf("removed %s, which is not a build leftover: %v", name, err)
		}
	}
	for _, name := range []string{live, "idx.tmp-999", "idx.tmp-555.old"} {
		if !strings.Contains(log.String(), filepath.Join(parent, name)+" left by an interrupted build (") {
			t.Errorf("log does not report removing %s: %q", name, log.String())
		}
	}
	if !strings.Contains(log.String(), "idx.tmp-999 left by an interrupted build (5 B)") {
		t.Errorf("log does not give the size 5 B of idx.tmp-999: %q", log.String())
	}
	ix, err := Open(ctx, dir, OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if meta.NumDocs != 200 || ix.Len() != 200 || ix.Docs.Len() != 200 || ix.BM25.NumDocs() != 200 {
		t.Fatalf("new index: meta %d, docs %d, bm25 %d passages; want 200", meta.NumDocs, ix.Docs.Len(), ix.BM25.NumDocs())
	}
	if ix.OpenDuration <= 0 {
		t.Errorf("OpenDuration = %v, want > 0", ix.OpenDuration)
	}
	if err := ix.Docs.Check(nil); err != nil {
		t.Fatal(err)
	}
	if d, err := ix.Doc(199); err != nil || d.ID != "b199" {
		t.Fatalf("Doc(199) = %+v, %v", d, err)
	}
}
