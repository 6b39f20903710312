package transcript

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; an error wraps ErrSyntax and names the
// file; an accepted file renders back to a file that parses to the same
// cases, and rendering is a fixed point; any output given to Render
// either is refused or comes back as the case's Want.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		sample,
		"a\n----\n----\n----\nx\n\n----\n----\nb\n----\n",
		"cmd k=(a,b) q=\"x y\"\n----\n",
		"a\n----\n----\n",
		"# c\n----\n",
	} {
		f.Add([]byte(s), "out\n\nmore")
	}
	f.Fuzz(func(t *testing.T, data []byte, output string) {
		file, err := Parse("f.txt", data)
		if err != nil {
			if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "f.txt:") {
				t.Fatalf("error %v does not wrap ErrSyntax or name the file", err)
			}
			return
		}
		r1, err := file.Render(nil)
		if err != nil {
			t.Fatalf("Render of a parsed file: %v", err)
		}
		f2, err := Parse("f.txt", r1)
		if err != nil {
			t.Fatalf("rendered file %q does not parse: %v", r1, err)
		}
		if len(f2.Cases) != len(file.Cases) {
			t.Fatalf("%d cases after rendering, was %d", len(f2.Cases), len(file.Cases))
		}
		for i, c := range file.Cases {
			d := f2.Cases[i]
			if c.CmdLine != d.CmdLine || c.Input != d.Input || c.Want != d.Want {
				t.Fatalf("case %d changed by rendering: %+v -> %+v", i, c, d)
			}
		}
		if r2, _ := f2.Render(nil); string(r2) != string(r1) {
			t.Fatalf("Render not a fixed point: %q -> %q", r1, r2)
		}
		if len(file.Cases) == 0 {
			return
		}
		out := map[*Case]string{}
		for _, c := range file.Cases {
			out[c] = output
		}
		r3, err := file.Render(out)
		if err != nil {
			return
		}
		f3, err := Parse("f.txt", r3)
		if err != nil {
			t.Fatalf("file rendered with output %q does not parse: %v\n%s", output, err, r3)
		}
		for i, c := range f3.Cases {
			if c.Want != normalize(output) || c.Input != file.Cases[i].Input {
				t.Fatalf("case %d: Want %q, input %q after rendering output %q", i, c.Want, c.Input, output)
			}
		}
	})
}
