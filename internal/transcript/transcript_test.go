package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const sample = `# A comment before the first case.
compile schema=amazon list=(a, b) strict name="two words"
WHERE x = 1

# an input line, not a comment
----
x = 1

# Between cases.

empty
----

blank-output
in
----
----
line one

line three
----
----
last
----
no newline at the end`

func TestParse(t *testing.T) {
	f, err := Parse("s.txt", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 4 {
		t.Fatalf("%d cases, want 4", len(f.Cases))
	}
	c := f.Cases[0]
	wantArgs := []Arg{{"schema", []string{"amazon"}}, {"list", []string{"a", "b"}}, {"strict", nil}, {"name", []string{"two words"}}}
	if c.Cmd != "compile" || c.Line != 2 || !reflect.DeepEqual(c.Args, wantArgs) {
		t.Errorf("case 0: %q line %d args %q", c.Cmd, c.Line, c.Args)
	}
	if c.Input != "WHERE x = 1\n\n# an input line, not a comment" || c.Want != "x = 1\n" {
		t.Errorf("case 0: input %q want %q", c.Input, c.Want)
	}
	if v, ok := c.Arg("schema"); v != "amazon" || !ok {
		t.Errorf("Arg(schema) = %q, %v", v, ok)
	}
	if v, ok := c.Arg("strict"); v != "" || !ok {
		t.Errorf("Arg(strict) = %q, %v", v, ok)
	}
	if _, ok := c.Arg("nope"); ok {
		t.Error("Arg(nope) found")
	}
	if c := f.Cases[1]; c.Cmd != "empty" || c.Line != 11 || c.Input != "" || c.Want != "" {
		t.Errorf("case 1: %+v", c)
	}
	if c := f.Cases[2]; c.Line != 14 || c.Input != "in" || c.Want != "line one\n\nline three\n" {
		t.Errorf("case 2: %+v", c)
	}
	if c := f.Cases[3]; c.Line != 23 || c.Want != "no newline at the end\n" || c.Pos() != "s.txt:23" {
		t.Errorf("case 3: %+v", c)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no separator", "cmd\ninput\n", "f.txt:1: case \"cmd\" has no \"----\" line before the end of the file"},
		{"no separator, later case", "a\n----\nx\n\nb\ninput", "f.txt:5: case \"b\" has no"},
		{"unclosed double", "a\n----\n----\nx\n\ny\n", "f.txt:3: output opened by two \"----\" lines is not closed"},
		{"unclosed double, one closing line", "a\n----\n----\nx\n----\n", "f.txt:3: output opened by two"},
		{"stray separator", "# c\n----\n", "f.txt:2: \"----\" where a command was expected"},
		{"separator after double close", "a\n----\n----\nx\n----\n----\n----\n", "f.txt:7: \"----\" where a command was expected"},
		{"bad name", "a=b\n----\n", "f.txt:1: command \"a=b\""},
		{"empty key", "cmd =x\n----\n", "f.txt:1: argument \"=x\""},
		{"unclosed list", "cmd k=(a,b\n----\n", "f.txt:1: argument k: unclosed '('"},
		{"empty list value", "cmd k=(a,,b)\n----\n", "f.txt:1: argument k: empty value"},
		{"bad quote", "cmd k=\"abc\n----\n", "f.txt:1: argument k: bad quoted value"},
		{"no value", "cmd k= j\n----\n", "f.txt:1: argument k: want a value"},
		{"junk after list", "cmd k=(a)b\n----\n", "f.txt:1: argument k: want a space after its value"},
		{"junk after quote", "cmd k=\"a\"b\n----\n", "f.txt:1: argument k: want a space"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("f.txt", []byte(tc.text))
			if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) = %v, want ErrSyntax containing %q", tc.text, err, tc.want)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	for _, text := range []string{
		sample + "\n",
		"",
		"\n\n# only comments\n",
		"a\n----\n----\n----\nx\n\n----\n----\nb\n----\n",
		"  indented k=v\n  input kept as written  \n----\n out kept\n",
	} {
		f, err := Parse("f.txt", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Render(nil)
		if err != nil || string(got) != text {
			t.Errorf("Render(Parse(%q)) = %q, %v", text, got, err)
		}
	}
}

func TestRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.txt")
	if err := os.WriteFile(path, []byte(sample), 0o640); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	outs := []string{
		"one line",                 // single-separator form, no final newline given
		"now\n\nwith a blank line", // becomes the double form
		"single again\n",           // from the double form, followed by a case: a blank line is added
		"----\nstarts with a separator",
	}
	out := map[*Case]string{}
	for i, c := range f.Cases {
		out[c] = outs[i]
	}
	if err := f.Rewrite(out); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	want := `# A comment before the first case.
compile schema=amazon list=(a, b) strict name="two words"
WHERE x = 1

# an input line, not a comment
----
one line

# Between cases.

empty
----
----
now

with a blank line
----
----

blank-output
in
----
single again

last
----
----
----
starts with a separator
----
----
`
	if string(first) != want {
		t.Fatalf("rewritten file:\n%s\ndiff (-want +got):\n%s", first, Diff(want, string(first)))
	}
	// The rewritten file holds the outputs, and a second rewrite with the
	// same outputs gives the same bytes.
	f2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	out2 := map[*Case]string{}
	for i, c := range f2.Cases {
		if c.Want != normalize(outs[i]) {
			t.Errorf("case %d: Want %q after the rewrite, want %q", i, c.Want, outs[i])
		}
		out2[c] = c.Want
	}
	if err := f2.Rewrite(out2); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(path); string(second) != string(first) {
		t.Errorf("second rewrite changed the file:\n%s", Diff(string(first), string(second)))
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1 (no temporary left)", len(ents))
	}
}

func TestRewriteUnwritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.txt")
	if err := os.WriteFile(path, []byte("a\n----\nold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []string{"x\n----\n----\ny", "x\n\n----"} {
		if err := f.Rewrite(map[*Case]string{f.Cases[0]: o}); err == nil || !strings.Contains(err.Error(), "u.txt:1") {
			t.Errorf("Rewrite with output %q: %v, want an error naming u.txt:1", o, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != "a\n----\nold\n" {
		t.Errorf("file changed to %q", b)
	}
}

func TestExpand(t *testing.T) {
	got, err := Expand("# comment\n\"WHERE \"\n  \"[\" * 3\n`raw\\n`\n\"\\x00\\xff\" * 0\n\"x\"*2\n")
	if err != nil || got != "WHERE [[[raw\\nxx" {
		t.Errorf("Expand = %q, %v", got, err)
	}
	for _, in := range []string{"bare", "'c'", "\"a\" * -1", "\"a\" * x", "\"a\" + \"b\"", "\"a\" * 99999999999"} {
		if _, err := Expand("\"ok\"\n" + in); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("Expand(%q) = %v, want an error naming line 2", in, err)
		}
	}
}

func TestPrintable(t *testing.T) {
	if got := Printable("a\tb\nç\x00\xff\u200b\x7f"); got != `a	b
ç\x00\xff\u200b\x7f` {
		t.Errorf("Printable = %q", got)
	}
}

func TestDiff(t *testing.T) {
	if got := Diff("a\nb\nc\n", "a\nc\nd\n"); got != "  a\n- b\n  c\n+ d\n" {
		t.Errorf("Diff = %q", got)
	}
	if got := Diff("", "x"); got != "+ x\n" {
		t.Errorf("Diff = %q", got)
	}
}

// TestRun runs testdata/example.txt through Run: the package's own
// transcript, with a command per feature.
func TestRun(t *testing.T) {
	Run(t, "testdata/example.txt", func(t *testing.T, c *Case) string {
		switch c.Cmd {
		case "upper":
			return strings.ToUpper(c.Input)
		case "args":
			var b strings.Builder
			for _, a := range c.Args {
				b.WriteString(a.Key + "=" + strings.Join(a.Vals, "|") + "\n")
			}
			return b.String()
		case "expand":
			s, err := Expand(c.Input)
			if err != nil {
				return "error: " + err.Error()
			}
			return Printable(s)
		case "lines":
			return strings.ReplaceAll(c.Input, ",", "\n")
		}
		t.Fatalf("unknown command %q", c.Cmd)
		return ""
	})
}

func TestMismatchReport(t *testing.T) {
	c := &Case{File: "m.txt", Line: 3, CmdLine: "cmd k=v", Input: "in", Want: "a\nb\n"}
	got := Mismatch(c, "a\nc\n")
	for _, w := range []string{"command: cmd k=v", "input:\n    in\n", "want:\n    a\n    b\n", "got:\n    a\n    c\n", "- b\n+ c\n", "-update"} {
		if !strings.Contains(got, w) {
			t.Errorf("report lacks %q:\n%s", w, got)
		}
	}
}
