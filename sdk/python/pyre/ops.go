package pyre

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Match is a match object: the subject and the byte offsets of every group
// (-1, -1 for a group that did not take part).
type Match struct {
	Re      *Regexp
	Subject string
	offs    []int // 2*(NumGroups+1) byte offsets
}

// ByteSpan is the byte offsets of group i (-1, -1 when it did not take part).
func (m *Match) ByteSpan(i int) (int, int) { return m.offs[2*i], m.offs[2*i+1] }

// Span is m.span(i) in code points, (-1, -1) when the group did not take part.
func (m *Match) Span(i int) (int, int) {
	a, b := m.ByteSpan(i)
	if a < 0 {
		return -1, -1
	}
	ca := utf8.RuneCountInString(m.Subject[:a])
	return ca, ca + utf8.RuneCountInString(m.Subject[a:b])
}

// Start and End are m.start(i) and m.end(i) in code points.
func (m *Match) Start(i int) int { a, _ := m.Span(i); return a }

// End is m.end(i) in code points.
func (m *Match) End(i int) int { _, b := m.Span(i); return b }

// Group is m.group(i); ok is false when the group did not take part (None).
func (m *Match) Group(i int) (string, bool) {
	a, b := m.ByteSpan(i)
	if a < 0 {
		return "", false
	}
	return m.Subject[a:b], true
}

// GroupIndex resolves a group given by number or name as m.group() does;
// the error is IndexError "no such group".
func (m *Match) GroupIndex(name string) (int, error) {
	if i, ok := m.Re.GroupIndex[name]; ok {
		return i, nil
	}
	return 0, fmt.Errorf("no such group")
}

// Groups is m.groups(): nil entries for groups that did not take part.
func (m *Match) Groups() []*string {
	out := make([]*string, m.Re.NumGroups)
	for i := 1; i <= m.Re.NumGroups; i++ {
		if s, ok := m.Group(i); ok {
			out[i-1] = &s
		}
	}
	return out
}

// GroupDict is m.groupdict(): names in pattern order with their values.
func (m *Match) GroupDict() (names []string, values []*string) {
	for i := 1; i <= m.Re.NumGroups; i++ {
		if n := m.Re.groupNames[i]; n != "" {
			names = append(names, n)
			var v *string
			if s, ok := m.Group(i); ok {
				v = &s
			}
			values = append(values, v)
		}
	}
	return names, values
}

// searchAt is the leftmost match starting at or after byte offset p.
func (r *Regexp) searchAt(s string, p int) []int {
	if p > len(s) {
		return nil
	}
	if p == 0 {
		return r.find(r.eng(s), engSearch, s)
	}
	_, w := utf8.DecodeLastRuneInString(s[:p])
	q := p - w
	m := r.find(r.eng(s), engFrom, s[q:])
	if m == nil {
		return nil
	}
	out := make([]int, len(m)-2)
	for i := 2; i < len(m); i++ {
		if m[i] >= 0 {
			out[i-2] = m[i] + q
		} else {
			out[i-2] = -1
		}
	}
	return out
}

// Search is re.search.
func (r *Regexp) Search(s string) *Match {
	if m := r.searchAt(s, 0); m != nil {
		return &Match{Re: r, Subject: s, offs: m}
	}
	return nil
}

// Match is re.match: anchored at the start.
func (r *Regexp) Match(s string) *Match {
	if m := r.find(r.eng(s), engAnchored, s); m != nil {
		return &Match{Re: r, Subject: s, offs: m}
	}
	return nil
}

// Fullmatch is re.fullmatch.
func (r *Regexp) Fullmatch(s string) *Match {
	if m := r.find(r.eng(s), engFull, s); m != nil {
		return &Match{Re: r, Subject: s, offs: m}
	}
	return nil
}

// Finditer is re.finditer: every match, Python 3.7+ empty-match rules;
// limit > 0 stops after limit matches.
func (r *Regexp) Finditer(s string, limit int) []*Match {
	var out []*Match
	p := 0
	for limit <= 0 || len(out) < limit {
		m := r.searchAt(s, p)
		if m == nil {
			break
		}
		out = append(out, &Match{Re: r, Subject: s, offs: m})
		if m[1] == m[0] {
			if m[1] >= len(s) {
				break
			}
			_, w := utf8.DecodeRuneInString(s[m[1]:])
			p = m[1] + w
		} else {
			p = m[1]
		}
	}
	return out
}

// FindAll is re.findall: each item is the whole match (no groups), the one
// group, or a tuple of all groups, with "" for groups that did not take part.
func (r *Regexp) FindAll(s string) [][]string {
	var out [][]string
	for _, m := range r.Finditer(s, 0) {
		if r.NumGroups == 0 {
			g, _ := m.Group(0)
			out = append(out, []string{g})
			continue
		}
		row := make([]string, r.NumGroups)
		for i := 1; i <= r.NumGroups; i++ {
			row[i-1], _ = m.Group(i)
		}
		out = append(out, row)
	}
	return out
}

// Split is re.split(pattern, s, maxsplit): the pieces, with the groups of
// each separator in between (nil for a group that did not take part).
func (r *Regexp) Split(s string, maxsplit int) []*string {
	if maxsplit < 0 {
		return []*string{&s}
	}
	var out []*string
	last := 0
	for _, m := range r.Finditer(s, maxsplit) {
		piece := s[last:m.offs[0]]
		out = append(out, &piece)
		for i := 1; i <= r.NumGroups; i++ {
			if g, ok := m.Group(i); ok {
				out = append(out, &g)
			} else {
				out = append(out, nil)
			}
		}
		last = m.offs[1]
	}
	rest := s[last:]
	return append(out, &rest)
}

// Subn is re.subn with a template string: the result and the number of
// replacements; count > 0 limits them.
func (r *Regexp) Subn(repl, s string, count int) (string, int, error) {
	tmpl, err := r.ParseTemplate(repl)
	if err != nil {
		return "", 0, err
	}
	return r.SubnFunc(s, count, func(m *Match) (string, error) { return tmpl.Expand(m), nil })
}

// Sub is re.sub with a template string.
func (r *Regexp) Sub(repl, s string, count int) (string, error) {
	out, _, err := r.Subn(repl, s, count)
	return out, err
}

// SubnFunc is re.subn with a function replacement.
func (r *Regexp) SubnFunc(s string, count int, f func(*Match) (string, error)) (string, int, error) {
	var b strings.Builder
	last, n := 0, 0
	for _, m := range r.Finditer(s, count) {
		rep, err := f(m)
		if err != nil {
			return "", n, err
		}
		b.WriteString(s[last:m.offs[0]])
		b.WriteString(rep)
		last = m.offs[1]
		n++
	}
	b.WriteString(s[last:])
	return b.String(), n, nil
}

// Template is a parsed replacement template.
type Template struct {
	pieces []tpiece
}

type tpiece struct {
	lit   string
	group int // -1 for a literal
}

// Expand renders the template for a match; a group that did not take part
// expands to "" (Python 3.5+).
func (t *Template) Expand(m *Match) string {
	var b strings.Builder
	for _, p := range t.pieces {
		if p.group < 0 {
			b.WriteString(p.lit)
		} else {
			g, _ := m.Group(p.group)
			b.WriteString(g)
		}
	}
	return b.String()
}

// ParseTemplate parses a re.sub template with CPython's escapes and errors.
func (r *Regexp) ParseTemplate(repl string) (*Template, error) {
	src := []rune(repl)
	t := &Template{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.pieces = append(t.pieces, tpiece{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	addGroup := func(g, pos int) error {
		if g > r.NumGroups {
			return &Error{Msg: fmt.Sprintf("invalid group reference %d", g), Pos: pos}
		}
		flush()
		t.pieces = append(t.pieces, tpiece{group: g})
		return nil
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			lit.WriteRune(c)
			continue
		}
		pos := i
		i++
		if i >= len(src) {
			return nil, &Error{Msg: "bad escape (end of pattern)", Pos: pos}
		}
		c = src[i]
		switch {
		case c == 'g':
			if i+1 >= len(src) || src[i+1] != '<' {
				return nil, &Error{Msg: "missing <", Pos: i + 1}
			}
			j := i + 2
			if j >= len(src) {
				return nil, &Error{Msg: "missing group name", Pos: j}
			}
			for j < len(src) && src[j] != '>' {
				j++
			}
			if j >= len(src) {
				return nil, &Error{Msg: "missing >, unterminated name", Pos: i + 2}
			}
			name := string(src[i+2 : j])
			if name == "" {
				return nil, &Error{Msg: "missing group name", Pos: i + 2}
			}
			var g int
			if allDigits(name) {
				fmt.Sscan(name, &g)
				if len(name) > 9 {
					return nil, &Error{Msg: fmt.Sprintf("invalid group reference %s", name), Pos: i + 2}
				}
			} else if idx, ok := r.GroupIndex[name]; ok {
				g = idx
			} else if !isIdent(name) {
				return nil, &Error{Msg: fmt.Sprintf("bad character in group name %s", pyQuote(name)), Pos: i + 2}
			} else {
				return nil, &IndexError{Msg: fmt.Sprintf("unknown group name %s", pyQuote(name))}
			}
			if err := addGroup(g, i+2); err != nil {
				return nil, err
			}
			i = j
		case c == '0':
			v := 0
			k := 0
			for k < 2 && i+1 < len(src) && isOct(src[i+1]) {
				v = v*8 + int(src[i+1]-'0')
				i++
				k++
			}
			lit.WriteRune(rune(v))
		case c >= '1' && c <= '9':
			if c <= '7' && i+2 < len(src) && isOct(src[i+1]) && isOct(src[i+2]) {
				v := int(c-'0')*64 + int(src[i+1]-'0')*8 + int(src[i+2]-'0')
				if v > 0o377 {
					return nil, &Error{Msg: fmt.Sprintf("octal escape value \\%s outside of range 0-0o377", string(src[i:i+3])), Pos: pos}
				}
				lit.WriteRune(rune(v))
				i += 2
				continue
			}
			g := int(c - '0')
			if i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9' {
				g = g*10 + int(src[i+1]-'0')
				i++
			}
			if err := addGroup(g, pos+1); err != nil {
				return nil, err
			}
		default:
			switch c {
			case 'a':
				lit.WriteByte(7)
			case 'b':
				lit.WriteByte('\b')
			case 'f':
				lit.WriteByte('\f')
			case 'n':
				lit.WriteByte('\n')
			case 'r':
				lit.WriteByte('\r')
			case 't':
				lit.WriteByte('\t')
			case 'v':
				lit.WriteByte('\v')
			case '\\':
				lit.WriteByte('\\')
			default:
				if c < 0x80 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
					return nil, &Error{Msg: fmt.Sprintf("bad escape \\%c", c), Pos: pos}
				}
				lit.WriteByte('\\')
				lit.WriteRune(c)
			}
		}
	}
	flush()
	return t, nil
}

// IndexError is Python's IndexError (an unknown group name in a template).
type IndexError struct{ Msg string }

func (e *IndexError) Error() string { return e.Msg }

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// Escape is re.escape (Python 3.7+): a backslash before each of
// ()[]{}?*+-|^$\.&~# and the whitespace characters \t\n\r\v\f and space.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
