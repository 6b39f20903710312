package main

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// denseDemoLine is how the README's dense demo line starts.
const denseDemoLine = "make demo MODEL=$(make -s testmodel)"

// TestReadmeDenseDemo (issue 25, item 6) runs the README's dense demo line
// exactly as written, in a shell at the repository root. `make testmodel`
// used to print "MODEL=/path", so the natural reading failed with "open
// MODEL=/…/rlsearch.json: no such file or directory". Only the
// environment differs from a user's shell: a free PORT, the data
// directory, and no MAKEFLAGS of an enclosing make. About 30 s (it
// indexes wiki_multihop with the generated model); skipped under -short.
func TestReadmeDenseDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make demo with a model (~30 s)")
	}
	root := testutil.RepoRoot(t)
	data := testutil.DataDir(t)
	testutil.ORTLib(t)
	if _, err := os.Stat(filepath.Join(root, ".cache", "tokenizers", "bert-uncased.json")); err != nil {
		testutil.RequireNative(t, "BERT tokenizer (scripts/setup.sh)")
	}
	if _, err := exec.LookPath("make"); err != nil {
		testutil.RequireNative(t, "make")
	}
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var line string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), denseDemoLine) {
			line, _, _ = strings.Cut(sc.Text(), "#")
			break
		}
	}
	if line == "" {
		t.Fatalf("README.md has no line starting with %q", denseDemoLine)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a bound on a hung demo, not a timing check
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = root
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MAKELEVEL" && k != "MFLAGS" && k != "PORT" && k != "DATA" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PORT="+strconv.Itoa(port), "DATA="+data)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	for _, want := range []string{"== POST /retrieve (e5)", "a generated BERT with random weights", "e5  hotpotqa", "== done (graceful shutdown)"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
