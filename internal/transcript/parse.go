package transcript

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Separator is the line between a case's input and its expected output.
const Separator = "----"

// ErrSyntax is wrapped by every error of Parse (as "file:line: ...").
var ErrSyntax = errors.New("transcript: syntax error")

// Arg is one argument of a command line: Key alone (a flag), key=value
// (one Val) or key=(a,b,c) (several Vals).
type Arg struct {
	Key  string
	Vals []string
}

// Case is one case of a file. Input and Want are the input lines and the
// expected output lines joined with "\n"; Input has no final newline, Want
// has one unless it is empty. The test function must not modify a Case.
type Case struct {
	File string // the path as given to Parse or Run
	Line int    // 1-based line of the command
	Cmd  string // the command name
	Args []Arg
	// CmdLine is the command line as written.
	CmdLine string
	Input   string
	Want    string

	inputLines []string
}

// Arg returns the first value of the argument key ("" for a bare key) and
// whether the command has that argument.
func (c *Case) Arg(key string) (string, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return a.Vals[0], true
		}
	}
	return "", false
}

// Pos is "file:line" of the command, for messages.
func (c *Case) Pos() string { return fmt.Sprintf("%s:%d", c.File, c.Line) }

// File is a parsed transcript: cases and the comment lines around them,
// in order, so that Render gives the file back.
type File struct {
	Path  string
	Cases []*Case
	items []item
}

// item is either a case (c != nil) or a verbatim line (a comment or a
// blank line between cases).
type item struct {
	c    *Case
	line string
}

// Parse reads a transcript. Errors wrap ErrSyntax and name path and the
// line: a command line that does not parse, a case without a separator
// before the end of the file, an output opened by two separators and never
// closed, a separator where a command was expected.
func Parse(path string, data []byte) (*File, error) {
	text := string(data)
	text = strings.TrimSuffix(text, "\n")
	var lines []string
	if text != "" || len(data) > 0 {
		lines = strings.Split(text, "\n")
	}
	f := &File{Path: path}
	errf := func(line int, format string, args ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrSyntax, path, line, fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			f.items = append(f.items, item{line: l})
			i++
			continue
		}
		if l == Separator {
			return nil, errf(i+1, "%q where a command was expected (a case is a command line, input, %q, output)", Separator, Separator)
		}
		c := &Case{File: path, Line: i + 1, CmdLine: l}
		var err error
		if c.Cmd, c.Args, err = parseCommand(l); err != nil {
			return nil, errf(i+1, "%v", err)
		}
		i++
		for i < len(lines) && lines[i] != Separator {
			c.inputLines = append(c.inputLines, lines[i])
			i++
		}
		if i == len(lines) {
			return nil, errf(c.Line, "case %q has no %q line before the end of the file", c.Cmd, Separator)
		}
		c.Input = strings.Join(c.inputLines, "\n")
		i++ // the separator
		var want []string
		if i < len(lines) && lines[i] == Separator {
			open := i
			i++
			for {
				if i+1 >= len(lines) {
					return nil, errf(open+1, "output opened by two %q lines is not closed by two %q lines", Separator, Separator)
				}
				if lines[i] == Separator && lines[i+1] == Separator {
					i += 2
					break
				}
				want = append(want, lines[i])
				i++
			}
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				want = append(want, lines[i])
				i++
			}
		}
		if len(want) > 0 {
			c.Want = strings.Join(want, "\n") + "\n"
		}
		f.Cases = append(f.Cases, c)
		f.items = append(f.items, item{c: c})
	}
	return f, nil
}

// parseCommand splits a command line into its name and arguments.
func parseCommand(l string) (string, []Arg, error) {
	s := strings.TrimLeft(l, " \t")
	name, s := cut(s)
	if name == "" || strings.ContainsAny(name, `="()`) {
		return "", nil, fmt.Errorf("command %q: want a name, then key=value arguments", name)
	}
	var args []Arg
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return name, args, nil
		}
		var a Arg
		j := strings.IndexAny(s, "= \t")
		if j < 0 {
			j = len(s)
		}
		a.Key, s = s[:j], s[j:]
		if a.Key == "" || strings.ContainsAny(a.Key, `"()`) {
			return "", nil, fmt.Errorf("argument %q: want key, key=value or key=(a,b)", a.Key+s)
		}
		if !strings.HasPrefix(s, "=") {
			args = append(args, a)
			continue
		}
		s = s[1:]
		switch {
		case strings.HasPrefix(s, "("):
			end := strings.IndexByte(s, ')')
			if end < 0 {
				return "", nil, fmt.Errorf("argument %s: unclosed '('", a.Key)
			}
			for _, v := range strings.Split(s[1:end], ",") {
				v = strings.TrimSpace(v)
				if v == "" {
					return "", nil, fmt.Errorf("argument %s: empty value in the list", a.Key)
				}
				a.Vals = append(a.Vals, v)
			}
			s = s[end+1:]
		case strings.HasPrefix(s, `"`):
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return "", nil, fmt.Errorf("argument %s: bad quoted value: %v", a.Key, err)
			}
			v, _ := strconv.Unquote(q)
			a.Vals = append(a.Vals, v)
			s = s[len(q):]
		default:
			var v string
			v, s = cut(s)
			if v == "" || strings.ContainsAny(v, `"()`) {
				return "", nil, fmt.Errorf("argument %s: want a value after '='", a.Key)
			}
			a.Vals = append(a.Vals, v)
		}
		if s != "" && s[0] != ' ' && s[0] != '\t' {
			return "", nil, fmt.Errorf("argument %s: want a space after its value, found %q", a.Key, s)
		}
		args = append(args, a)
	}
}

// cut returns the text up to the first space or tab, and the rest.
func cut(s string) (string, string) {
	if j := strings.IndexAny(s, " \t"); j >= 0 {
		return s[:j], s[j:]
	}
	return s, ""
}

// Render writes the file back with the outputs out[i] for Cases[i] (a
// case whose out is missing, out == nil or shorter, keeps its Want). Each
// output gets a final newline when it lacks one; one holding a blank line
// or starting with a separator line is written between double separators.
// Errors: an output that cannot be written (it holds the pair of lines
// "----","----" or ends with "----").
func (f *File) Render(out map[*Case]string) ([]byte, error) {
	var b strings.Builder
	for k, it := range f.items {
		if it.c == nil {
			b.WriteString(it.line)
			b.WriteByte('\n')
			continue
		}
		c := it.c
		want := c.Want
		if o, ok := out[c]; ok {
			want = normalize(o)
		}
		b.WriteString(c.CmdLine)
		b.WriteByte('\n')
		for _, l := range c.inputLines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		b.WriteString(Separator + "\n")
		o, err := formatOutput(want)
		if err != nil {
			return nil, fmt.Errorf("transcript: %s: %w", c.Pos(), err)
		}
		b.WriteString(o)
		// A single-separator output ends at a blank line: give it one
		// when the next item would otherwise be read as output.
		if !strings.HasPrefix(o, Separator+"\n") && k+1 < len(f.items) {
			if next := f.items[k+1]; next.c != nil || strings.TrimSpace(next.line) != "" {
				b.WriteByte('\n')
			}
		}
	}
	return []byte(b.String()), nil
}

// normalize adds the final newline a non-empty output lacks.
func normalize(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}

// formatOutput writes a normalized output after the separator line.
func formatOutput(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	double := lines[0] == Separator
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			double = true
		}
		if l == Separator && i+1 < len(lines) && lines[i+1] == Separator {
			return "", fmt.Errorf("output holds two %q lines in a row, which no transcript can hold", Separator)
		}
	}
	if !double {
		return s, nil
	}
	if lines[len(lines)-1] == Separator {
		return "", fmt.Errorf("output holding a blank line ends with a %q line, which no transcript can hold", Separator)
	}
	return Separator + "\n" + s + Separator + "\n" + Separator + "\n", nil
}
