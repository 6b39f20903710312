package transcript

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// update is the -update flag of every test binary that links this
// package. A package's other golden files may share it through Updating
// (a second flag named "update" in the same binary would panic).
var update = flag.Bool("update", false, "transcript: rewrite the testdata transcripts (and the other golden files of the tests selected with -run) with the outputs the tests produce")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Load reads and parses the transcript at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Run runs every case of the transcript at path as a subtest named by the
// file's base name and the command's line ("parse.txt:12"), calling fn
// for its output. Without -update a case whose output differs from its
// Want fails with the position, the command, the input, the want, the got
// and a diff; with -update the file is rewritten (Rewrite) with every
// output produced (a case that failed or was skipped in fn keeps its old
// output). A file that does not parse fails the test at once.
func Run(t *testing.T, path string, fn func(t *testing.T, c *Case) string) {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	out := map[*Case]string{}
	base := filepath.Base(path)
	for _, c := range f.Cases {
		t.Run(fmt.Sprintf("%s:%d", base, c.Line), func(t *testing.T) {
			got := normalize(fn(t, c))
			if t.Failed() || t.Skipped() {
				return
			}
			if *update {
				out[c] = got
				return
			}
			if got != c.Want {
				t.Errorf("%s\n%s", c.Pos(), Mismatch(c, got))
			}
		})
	}
	if *update {
		if err := f.Rewrite(out); err != nil {
			t.Fatal(err)
		}
	}
}

// Mismatch is the report of a case whose output got differs from its Want.
func Mismatch(c *Case, got string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\n", c.CmdLine)
	if c.Input != "" {
		fmt.Fprintf(&b, "input:\n%s", indent(c.Input+"\n"))
	}
	fmt.Fprintf(&b, "want:\n%s", indent(c.Want))
	fmt.Fprintf(&b, "got:\n%s", indent(got))
	fmt.Fprintf(&b, "diff (-want +got):\n%s", Diff(c.Want, got))
	b.WriteString("(go test -update rewrites the file with the outputs got)")
	return b.String()
}

func indent(s string) string {
	if s == "" {
		return "    (empty)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// Rewrite writes the file back to its Path with the outputs out (see
// Render), atomically, keeping the file's permissions. An unchanged file
// is not written.
func (f *File) Rewrite(out map[*Case]string) error {
	data, err := f.Render(out)
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if st, err := os.Stat(f.Path); err == nil {
		perm = st.Mode().Perm()
		if old, err := os.ReadFile(f.Path); err == nil && string(old) == string(data) {
			return nil
		}
	}
	return atomicfile.WriteFile(f.Path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Diff is a line diff of want and got: common lines indented by two
// spaces, lines only in want prefixed "- ", lines only in got "+ ". Past
// 2000 lines on a side it shows both texts whole instead.
func Diff(want, got string) string {
	a := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
	b := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if want == "" {
		a = nil
	}
	if got == "" {
		b = nil
	}
	var o strings.Builder
	if len(a) > 2000 || len(b) > 2000 {
		for _, l := range a {
			o.WriteString("- " + l + "\n")
		}
		for _, l := range b {
			o.WriteString("+ " + l + "\n")
		}
		return o.String()
	}
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			o.WriteString("  " + a[i] + "\n")
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			o.WriteString("- " + a[i] + "\n")
			i++
		default:
			o.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return o.String()
}
