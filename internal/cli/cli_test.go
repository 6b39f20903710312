package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestParseInterspersed(t *testing.T) {
	for _, tc := range []struct {
		args []string
		k    int
		pos  []string
	}{
		{[]string{"q1", "-k", "5", "q2"}, 5, []string{"q1", "q2"}},
		{[]string{"-k", "2"}, 2, nil},
		{[]string{"q", "--", "-k", "3"}, 1, []string{"q", "-k", "3"}},
		{[]string{"--", "--"}, 1, []string{"--"}},
		{nil, 1, nil},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		k := fs.Int("k", 1, "")
		if err := Parse(fs, tc.args, io.Discard); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if *k != tc.k || !slices.Equal(fs.Args(), tc.pos) {
			t.Errorf("%q: k %d, positional %q; want k %d and %q in order", tc.args, *k, fs.Args(), tc.k, tc.pos)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Int("k", 1, "")
	if err := Parse(fs, []string{"q", "-k", "x"}, io.Discard); !errors.Is(err, ErrUsage) {
		t.Errorf("bad value: err %v, want ErrUsage", err)
	}
	if err := Parse(fs, []string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err %v, want flag.ErrHelp", err)
	}
}

func TestRequired(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.String("a", "", "")
	fs.Int("n", 0, "")
	fs.String("set", "x", "")
	for _, tc := range []struct {
		names []string
		want  string // "" = no error
	}{
		{[]string{"set"}, ""},
		{[]string{"a"}, "--a is required"},
		{[]string{"n", "set"}, "--n and --set are required"},
		{[]string{"set", "a", "n"}, "--set, --a and --n are required"},
		{[]string{"nope"}, "defines no flag --nope"},
	} {
		err := Required(fs, tc.names...)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Required %v: %v, want %q", tc.names, err, tc.want)
		}
	}
}

func TestExecAndRunSub(t *testing.T) {
	var got []string
	cmds := []Command{
		{Name: "copy", Summary: "copy things", Required: []string{"out"}, Args: "FILE ...", About: "Copies FILEs.", Flags: func(fs *flag.FlagSet) RunFunc {
			out := fs.String("out", "", "destination (required)")
			return func(_ context.Context, args []string, stdout, _ io.Writer) error {
				got = append(args, *out)
				fmt.Fprint(stdout, "copied")
				return nil
			}
		}},
		{Name: "none", Summary: "takes no arguments", Flags: func(fs *flag.FlagSet) RunFunc {
			return func(context.Context, []string, io.Writer, io.Writer) error { return errors.New("boom") }
		}},
	}
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"copy", "a", "--out", "d", "b"}, 0, "copied", ""},
		{[]string{"copy", "a"}, 2, "", ""},
		{[]string{"copy", "-h"}, 0, "", "usage: p copy --out OUT [flags] FILE ...\n\nCopies FILEs.\n\n  -out string"},
		{[]string{"none", "x"}, 2, "", ""},
		{[]string{"none"}, 1, "", ""},
		{nil, 2, "", "usage: p <command> [flags]\n\ncommands:\n  copy    copy things\n"},
		{[]string{"help"}, 0, "", "  none    takes no arguments"},
		{[]string{"nope"}, 2, "", "usage: p"},
	} {
		var stdout, stderr bytes.Buffer
		err := RunSub(context.Background(), "p", cmds, tc.args, &stdout, &stderr)
		if code := ExitCode(err); code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%q: exit %d (%v), stdout %q, stderr %q; want %d, %q, %q", tc.args, code, err, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
	if want := []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Errorf("copy ran with %q, want positional a, b then --out d", got)
	}
	errBad := errors.New("pkg: bad config")
	if ExitCode(fmt.Errorf("wrapped: %w", errBad), errBad) != 2 || ExitCode(errBad) != 1 {
		t.Error("ExitCode: a listed package error is 2, an unlisted one 1")
	}
}

func TestIntsAndKeyValues(t *testing.T) {
	if got, err := Ints("k", "1, 5,20"); err != nil || !slices.Equal(got, []int{1, 5, 20}) {
		t.Errorf("Ints: %v %v", got, err)
	}
	for _, bad := range []string{"", "1,x", "0", "1,-2"} {
		if _, err := Ints("k", bad); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "bad k") {
			t.Errorf("Ints(%q): %v, want a usage error naming k", bad, err)
		}
	}
	m := map[string]string{}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Var(KeyValues(m), "image", "")
	if err := Parse(fs, []string{"--image", "a=x.jsonl", "--image", "b=c=d"}, io.Discard); err != nil || m["a"] != "x.jsonl" || m["b"] != "c=d" {
		t.Errorf("KeyValues: %v %v", m, err)
	}
	for _, bad := range []string{"a", "=x", "a="} {
		if err := Parse(fs, []string{"--image", bad}, io.Discard); !errors.Is(err, ErrUsage) {
			t.Errorf("--image %q: %v, want a usage error", bad, err)
		}
	}
}
