package pyre

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Flags are Python's re flag values.
type Flags int

// Python's flag values (re.I == 2, ...).
const (
	I Flags = 2
	L Flags = 4
	M Flags = 8
	S Flags = 16
	U Flags = 32
	X Flags = 64
	A Flags = 256
)

// Error is re.error: Msg is CPython's text without the position, Pos the
// code point offset in the pattern (-1 when none). Unsupported marks a valid
// Python pattern that the sandbox cannot run in linear time.
type Error struct {
	Msg         string
	Pos         int
	Unsupported bool
}

func (e *Error) Error() string {
	if e.Pos < 0 {
		return e.Msg
	}
	return fmt.Sprintf("%s at position %d", e.Msg, e.Pos)
}

const linearHint = "the sandbox runs regular expressions in linear time"

// maxNesting bounds group nesting (RE2 refuses deeper expressions too).
const maxNesting = 500

// MaxRepeat is RE2's limit on a counted repetition.
const MaxRepeat = 1000

// Regexp is a compiled pattern.
type Regexp struct {
	Pattern    string
	Flags      Flags
	NumGroups  int            // number of capturing groups
	GroupIndex map[string]int // named groups
	groupNames []string       // index → name ("" when unnamed)
	plain      *engines       // $ as \z
	empty      *engines       // for the empty subject when the pattern has \B
	lastNL     *engines       // $ as (?m:$): for subjects whose only "\n" is the last byte
	goSyntax   string
	meter      Meter // nil: Go's regexp (see Metered)
}

// engines are the compiled forms of one RE2 translation.
type engines struct {
	re       *regexp.Regexp // search from the start
	from     *regexp.Regexp // \A(?s:.)(?s:.)*?(P): search from a later position
	anchored *regexp.Regexp // \A(?:P)
	full     *regexp.Regexp // \A(?:P)\z
	// The metered matchers of the same four expressions (vm.go), built on
	// first use by a Metered Regexp.
	exprs [4]string
	once  sync.Once
	vms   [4]*vm
}

// Which of an engines' four expressions to run.
const (
	engSearch = iota
	engFrom
	engAnchored
	engFull
)

// find runs expression which of e on s: Go's regexp, or the metered
// matcher when r has a Meter.
func (r *Regexp) find(e *engines, which int, s string) []int {
	if r.meter == nil {
		return [...]*regexp.Regexp{e.re, e.from, e.anchored, e.full}[which].FindStringSubmatchIndex(s)
	}
	e.once.Do(func() {
		for i, x := range e.exprs {
			// regexp.Compile accepted x, and newVM parses and compiles it
			// the same way, so it cannot fail here.
			v, err := newVM(x)
			if err != nil {
				panic("pyre: " + err.Error())
			}
			e.vms[i] = v
		}
	})
	return e.vms[which].find(s, r.meter)
}

// Metered returns a copy of r whose matches run on the metered matcher
// (vm.go) and report their work to m (see Meter); the result equals r's.
// The copy shares r's compiled programs; Match.Re of its matches is the
// copy. A nil m returns r.
func (r *Regexp) Metered(m Meter) *Regexp {
	if m == nil {
		return r
	}
	c := *r
	c.meter = m
	return &c
}

// dollarMark stands for a non-MULTILINE $ in the translation; a raw NUL
// never appears otherwise (lit escapes control characters).
const dollarMark = "\x00"

// nonBoundaryMark stands for \B: CPython's \B never matches in an empty
// subject, RE2's does.
const nonBoundaryMark = "\x01"

const never = `[^\x{0}-\x{10ffff}]`

func newEngines(g string) (*engines, error) {
	e := &engines{}
	var err error
	if e.re, err = regexp.Compile(g); err != nil {
		return nil, &Error{Msg: "pattern not supported by the linear-time engine: " + err.Error(), Pos: -1, Unsupported: true}
	}
	for _, v := range []struct {
		dst  **regexp.Regexp
		expr string
	}{{&e.from, `\A(?s:.)(?s:.)*?(` + g + `)`}, {&e.anchored, `\A(?:` + g + `)`}, {&e.full, `\A(?:` + g + `)\z`}} {
		if *v.dst, err = regexp.Compile(v.expr); err != nil {
			return nil, &Error{Msg: "pattern not supported by the linear-time engine: " + err.Error(), Pos: -1, Unsupported: true}
		}
	}
	e.exprs = [4]string{g, e.from.String(), e.anchored.String(), e.full.String()}
	return e, nil
}

// eng picks the engines for a subject: CPython's $ also matches before a
// final "\n", which (?m:$) gives exactly when no other "\n" precedes it.
func (r *Regexp) eng(s string) *engines {
	if len(s) == 0 && r.empty != nil {
		return r.empty
	}
	if r.lastNL != nil && len(s) > 0 && s[len(s)-1] == '\n' && strings.IndexByte(s, '\n') == len(s)-1 {
		return r.lastNL
	}
	return r.plain
}

// GoSyntax is the RE2 pattern the Python pattern became.
func (r *Regexp) GoSyntax() string { return r.goSyntax }

// Compile is re.compile(pattern, flags) for a str pattern.
func Compile(pattern string, flags Flags) (*Regexp, error) {
	if flags&L != 0 {
		return nil, &Error{Msg: "cannot use LOCALE flag with a str pattern", Pos: -1}
	}
	if flags&A != 0 && flags&U != 0 {
		return nil, &Error{Msg: "ASCII and UNICODE flags are incompatible", Pos: -1}
	}
	t := &translator{src: []rune(pattern), names: map[string]int{}}
	t.flags = flags
	body, err := t.parse()
	if err != nil {
		return nil, err
	}
	prefix := ""
	if t.flags&I != 0 {
		prefix = "(?i)"
	}
	g := prefix + body
	r := &Regexp{Pattern: pattern, Flags: t.flags | (flags &^ (L)), NumGroups: t.ngroups, GroupIndex: t.names, groupNames: t.groupNames, goSyntax: g}
	if r.Flags&A == 0 {
		r.Flags |= U
	}
	hasNB := strings.Contains(g, nonBoundaryMark)
	if hasNB {
		e, err := newEngines(strings.ReplaceAll(strings.ReplaceAll(g, nonBoundaryMark, never), dollarMark, `\z`))
		if err != nil {
			return nil, err
		}
		r.empty = e
		g = strings.ReplaceAll(g, nonBoundaryMark, `\B`)
	}
	r.goSyntax = strings.ReplaceAll(g, dollarMark, `\z`)
	var err2 error
	if r.plain, err2 = newEngines(r.goSyntax); err2 != nil {
		return nil, err2
	}
	if strings.Contains(g, dollarMark) {
		if r.lastNL, err2 = newEngines(strings.ReplaceAll(g, dollarMark, `(?m:$)`)); err2 != nil {
			return nil, err2
		}
	}
	return r, nil
}

// MustCompile is Compile that panics; for tests and constant patterns.
func MustCompile(pattern string, flags Flags) *Regexp {
	r, err := Compile(pattern, flags)
	if err != nil {
		panic(err)
	}
	return r
}

type translator struct {
	src        []rune
	i          int
	flags      Flags
	ngroups    int
	names      map[string]int
	groupNames []string
	open       []int // positions of open groups
}

func (t *translator) errf(pos int, format string, a ...any) error {
	return &Error{Msg: fmt.Sprintf(format, a...), Pos: pos}
}

func (t *translator) unsupported(pos int, what, fix string) error {
	return &Error{Msg: fmt.Sprintf("re: %s is not supported: %s; %s", what, linearHint, fix), Pos: pos, Unsupported: true}
}

func (t *translator) parse() (string, error) {
	t.groupNames = []string{""}
	// Global flags at the very start.
	for t.i+1 < len(t.src) && t.src[t.i] == '(' && t.src[t.i+1] == '?' {
		j := t.i + 2
		for j < len(t.src) && strings.ContainsRune("aiLmsux", t.src[j]) {
			j++
		}
		if j == t.i+2 || j >= len(t.src) || t.src[j] != ')' {
			break
		}
		for _, c := range t.src[t.i+2 : j] {
			f, err := t.flagOf(c, j)
			if err != nil {
				return "", err
			}
			t.flags |= f
		}
		if t.flags&A != 0 && t.flags&U != 0 {
			return "", t.errf(-1, "bad inline flags: flags 'a', 'u' and 'L' are incompatible")
		}
		t.i = j + 1
	}
	s, err := t.alt(t.flags, 0)
	if err != nil {
		return "", err
	}
	if t.i < len(t.src) {
		if t.src[t.i] == ')' {
			return "", t.errf(t.i, "unbalanced parenthesis")
		}
		return "", t.errf(t.i, "internal: stopped at %q", t.src[t.i])
	}
	return s, nil
}

func (t *translator) flagOf(c rune, pos int) (Flags, error) {
	switch c {
	case 'a':
		return A, nil
	case 'i':
		return I, nil
	case 'm':
		return M, nil
	case 's':
		return S, nil
	case 'u':
		return U, nil
	case 'x':
		return X, nil
	case 'L':
		return 0, t.errf(pos, "bad inline flags: cannot use 'L' flag with a str pattern")
	}
	return 0, t.errf(pos, "unknown flag")
}

// alt parses alternatives until ')' or the end.
func (t *translator) alt(fl Flags, depth int) (string, error) {
	var b strings.Builder
	for {
		s, err := t.seq(fl, depth)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		if t.i < len(t.src) && t.src[t.i] == '|' {
			t.i++
			b.WriteByte('|')
			continue
		}
		return b.String(), nil
	}
}

type item struct {
	s        string
	repeat   bool // can take a quantifier
	quant    bool // is already quantified
	position int
}

func (t *translator) skipVerbose(fl Flags) {
	if fl&X == 0 {
		return
	}
	for t.i < len(t.src) {
		c := t.src[t.i]
		if c == '#' {
			for t.i < len(t.src) && t.src[t.i] != '\n' {
				t.i++
			}
			continue
		}
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' {
			t.i++
			continue
		}
		return
	}
}

func (t *translator) seq(fl Flags, depth int) (string, error) {
	var items []item
	for {
		t.skipVerbose(fl)
		if t.i >= len(t.src) {
			break
		}
		c := t.src[t.i]
		if c == '|' || c == ')' {
			if c == ')' && depth == 0 {
				return "", t.errf(t.i, "unbalanced parenthesis")
			}
			break
		}
		if q := strings.ContainsRune("*+?{", c); q {
			ok, err := t.quantifier(&items, fl)
			if err != nil {
				return "", err
			}
			if ok {
				continue
			}
		}
		it, err := t.atom(fl, depth)
		if err != nil {
			return "", err
		}
		if it.s != "" || it.repeat {
			items = append(items, it)
		}
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.s)
	}
	return b.String(), nil
}

// quantifier applies * + ? {m,n} at t.i to the last item; false when '{'
// is a literal.
func (t *translator) quantifier(items *[]item, fl Flags) (bool, error) {
	start := t.i
	c := t.src[t.i]
	var q string
	if c == '{' {
		j := t.i + 1
		if j < len(t.src) && t.src[j] == '}' {
			return false, nil
		}
		lo, hi := "", ""
		for j < len(t.src) && t.src[j] >= '0' && t.src[j] <= '9' {
			lo += string(t.src[j])
			j++
		}
		comma := false
		if j < len(t.src) && t.src[j] == ',' {
			comma = true
			j++
			for j < len(t.src) && t.src[j] >= '0' && t.src[j] <= '9' {
				hi += string(t.src[j])
				j++
			}
		} else {
			hi = lo
		}
		if j >= len(t.src) || t.src[j] != '}' {
			return false, nil
		}
		minv, maxv := 0, -1
		if lo != "" {
			v, err := strconv.Atoi(lo)
			if err != nil || v >= 1<<32-1 {
				return false, &Error{Msg: "the repetition number is too large", Pos: -1}
			}
			minv = v
		}
		if hi != "" {
			v, err := strconv.Atoi(hi)
			if err != nil || v >= 1<<32-1 {
				return false, &Error{Msg: "the repetition number is too large", Pos: -1}
			}
			maxv = v
			if maxv < minv {
				return false, t.errf(t.i+1, "min repeat greater than max repeat")
			}
		}
		if minv > MaxRepeat || maxv > MaxRepeat {
			return false, t.unsupported(start, fmt.Sprintf("the repetition {%s} (above %d)", string(t.src[start+1:j]), MaxRepeat), "use + or * with a check in code, or a smaller count")
		}
		switch {
		case !comma:
			q = fmt.Sprintf("{%d}", minv)
		case maxv < 0:
			q = fmt.Sprintf("{%d,}", minv)
		default:
			q = fmt.Sprintf("{%d,%d}", minv, maxv)
		}
		t.i = j + 1
	} else {
		q = string(c)
		t.i++
	}
	if len(*items) == 0 || !(*items)[len(*items)-1].repeat {
		return false, t.errf(start, "nothing to repeat")
	}
	last := &(*items)[len(*items)-1]
	if last.quant {
		return false, t.errf(start, "multiple repeat")
	}
	if t.i < len(t.src) && t.src[t.i] == '?' {
		q += "?"
		t.i++
	} else if t.i < len(t.src) && t.src[t.i] == '+' {
		return false, t.unsupported(t.i, "a possessive quantifier ("+string(t.src[start:t.i+1])+")", "drop the trailing +")
	}
	last.s = "(?:" + last.s + ")" + q
	last.quant = true
	return true, nil
}

func lit(r rune) string {
	if r < 0x80 && strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
		return `\` + string(r)
	}
	if r < 0x20 || r == 0x7f || !unicode.IsPrint(r) {
		return fmt.Sprintf(`\x{%x}`, r)
	}
	return string(r)
}

func (t *translator) atom(fl Flags, depth int) (item, error) {
	pos := t.i
	c := t.src[t.i]
	t.i++
	switch c {
	case '.':
		if fl&S != 0 {
			return item{s: `(?s:.)`, repeat: true}, nil
		}
		return item{s: `[^\n]`, repeat: true}, nil
	case '^':
		if fl&M != 0 {
			return item{s: `(?m:^)`}, nil
		}
		return item{s: `\A`}, nil
	case '$':
		if fl&M != 0 {
			return item{s: `(?m:$)`}, nil
		}
		return item{s: dollarMark}, nil
	case '[':
		s, err := t.class(fl, pos)
		return item{s: s, repeat: true}, err
	case '(':
		return t.group(fl, depth, pos)
	case '\\':
		return t.escape(fl, pos)
	}
	return item{s: lit(c), repeat: true}, nil
}

func (t *translator) group(fl Flags, depth int, pos int) (item, error) {
	if depth >= maxNesting {
		return item{}, t.unsupported(pos, fmt.Sprintf("nesting groups more than %d deep", maxNesting), "flatten the pattern")
	}
	capture := true
	name := ""
	inner := fl
	scoped := ""
	if t.i < len(t.src) && t.src[t.i] == '?' {
		t.i++
		if t.i >= len(t.src) {
			return item{}, t.errf(t.i, "unexpected end of pattern")
		}
		c := t.src[t.i]
		switch {
		case c == ':':
			capture = false
			t.i++
		case c == 'P':
			t.i++
			if t.i < len(t.src) && t.src[t.i] == '<' {
				t.i++
				j := t.i
				for j < len(t.src) && t.src[j] != '>' {
					j++
				}
				if j >= len(t.src) {
					return item{}, t.errf(t.i, "missing >, unterminated name")
				}
				name = string(t.src[t.i:j])
				if name == "" {
					return item{}, t.errf(t.i, "missing group name")
				}
				if !isIdent(name) {
					return item{}, t.errf(t.i, "bad character in group name %s", pyQuote(name))
				}
				if _, dup := t.names[name]; dup {
					return item{}, &Error{Msg: fmt.Sprintf("redefinition of group name %s as group %d; was group %d", pyQuote(name), t.ngroups+1, t.names[name]), Pos: t.i}
				}
				t.i = j + 1
			} else if t.i < len(t.src) && t.src[t.i] == '=' {
				return item{}, t.unsupported(pos, "the backreference (?P=…)", "capture the group and compare it in code, e.g. m.group('name') == …")
			} else {
				if t.i >= len(t.src) {
					return item{}, t.errf(t.i, "unexpected end of pattern")
				}
				return item{}, t.errf(pos+1, "unknown extension ?P%c", t.src[t.i])
			}
		case c == '=' || c == '!':
			return item{}, t.unsupported(pos, "lookahead (?"+string(c)+"…)", "match more text and check it in code, or split the pattern in two searches")
		case c == '<':
			if t.i+1 < len(t.src) && (t.src[t.i+1] == '=' || t.src[t.i+1] == '!') {
				return item{}, t.unsupported(pos, "lookbehind (?<"+string(t.src[t.i+1])+"…)", "capture the preceding text in a group and check it in code")
			}
			if t.i+1 >= len(t.src) {
				return item{}, t.errf(t.i+1, "unexpected end of pattern")
			}
			return item{}, t.errf(pos+1, "unknown extension ?<%c", t.src[t.i+1])
		case c == '#':
			for t.i < len(t.src) && t.src[t.i] != ')' {
				t.i++
			}
			if t.i >= len(t.src) {
				return item{}, t.errf(pos, "missing ), unterminated comment")
			}
			t.i++
			return item{}, nil
		case c == '(':
			return item{}, t.unsupported(pos, "the conditional group (?(…)…)", "use two patterns and choose in code")
		case c == '>':
			return item{}, t.unsupported(pos, "the atomic group (?>…)", "use a plain group (?:…)")
		case strings.ContainsRune("aiLmsux-", c):
			on, off := Flags(0), Flags(0)
			neg := false
			for t.i < len(t.src) && t.src[t.i] != ':' && t.src[t.i] != ')' {
				ch := t.src[t.i]
				if ch == '-' {
					if neg {
						return item{}, t.errf(t.i, "unknown flag")
					}
					neg = true
					t.i++
					if t.i >= len(t.src) || !strings.ContainsRune("imsx", t.src[t.i]) {
						if t.i < len(t.src) && strings.ContainsRune("aLu", t.src[t.i]) {
							return item{}, t.errf(t.i+1, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
						}
						return item{}, t.errf(t.i, "missing flag")
					}
					continue
				}
				f, err := t.flagOf(ch, t.i+1)
				if err != nil {
					return item{}, err
				}
				if neg {
					if f&(A|U) != 0 {
						return item{}, t.errf(t.i+1, "bad inline flags: cannot turn off flags 'a', 'u' and 'L'")
					}
					off |= f
				} else {
					on |= f
				}
				t.i++
			}
			if t.i >= len(t.src) {
				return item{}, t.errf(t.i, "missing -, : or )")
			}
			if t.src[t.i] == ')' {
				return item{}, t.errf(pos, "global flags not at the start of the expression")
			}
			t.i++ // ':'
			if on&off != 0 {
				return item{}, t.errf(t.i-1, "bad inline flags: flag turned on and off")
			}
			inner = (fl | on) &^ off
			if on&A != 0 {
				inner &^= U
			}
			if on&U != 0 {
				inner &^= A
			}
			capture = false
			if on&I != 0 {
				scoped = "(?i:"
			} else if off&I != 0 {
				scoped = "(?-i:"
			}
		default:
			return item{}, t.errf(pos+1, "unknown extension ?%c", c)
		}
	}
	idx := 0
	if capture {
		t.ngroups++
		idx = t.ngroups
		t.groupNames = append(t.groupNames, name)
		if name != "" {
			t.names[name] = idx
		}
	}
	body, err := t.alt(inner, depth+1)
	if err != nil {
		return item{}, err
	}
	if t.i >= len(t.src) || t.src[t.i] != ')' {
		return item{}, t.errf(pos, "missing ), unterminated subpattern")
	}
	t.i++
	if scoped != "" {
		body = scoped + body + ")"
	}
	switch {
	case capture:
		return item{s: "(" + body + ")", repeat: true}, nil
	}
	return item{s: "(?:" + body + ")", repeat: true}, nil
}

func isIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Nd, r)))) {
			return false
		}
	}
	return s != ""
}

func pyQuote(s string) string {
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `\'`) + "'"
}

// Python's str.isspace set, and the classes for \d \w \s.
const (
	uniSpace   = `\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}`
	asciiSpace = `\t-\r\x{20}`
	uniWord    = `\p{L}\p{N}_`
	asciiWord  = `0-9A-Za-z_`
)

func shorthand(c rune, fl Flags) (string, bool) {
	a := fl&A != 0
	switch c {
	case 'd':
		if a {
			return `[0-9]`, true
		}
		return `\p{Nd}`, true
	case 'D':
		if a {
			return `[^0-9]`, true
		}
		return `\P{Nd}`, true
	case 'w':
		if a {
			return `[` + asciiWord + `]`, true
		}
		return `[` + uniWord + `]`, true
	case 'W':
		if a {
			return `[^` + asciiWord + `]`, true
		}
		return `[^` + uniWord + `]`, true
	case 's':
		if a {
			return `[` + asciiSpace + `]`, true
		}
		return `[` + uniSpace + `]`, true
	case 'S':
		if a {
			return `[^` + asciiSpace + `]`, true
		}
		return `[^` + uniSpace + `]`, true
	}
	return "", false
}

func (t *translator) escape(fl Flags, pos int) (item, error) {
	if t.i >= len(t.src) {
		return item{}, t.errf(pos, "bad escape (end of pattern)")
	}
	c := t.src[t.i]
	t.i++
	switch c {
	case 'A':
		return item{s: `\A`}, nil
	case 'Z':
		return item{s: `\z`}, nil
	case 'b':
		return item{s: `\b`}, nil
	case 'B':
		return item{s: nonBoundaryMark}, nil
	}
	if s, ok := shorthand(c, fl); ok {
		return item{s: s, repeat: true}, nil
	}
	if c >= '1' && c <= '9' {
		// octal escape of three digits, else a group reference
		if c <= '7' && t.i+1 < len(t.src) && isOct(t.src[t.i]) && isOct(t.src[t.i+1]) {
			v := (c-'0')*64 + (t.src[t.i]-'0')*8 + (t.src[t.i+1] - '0')
			t.i += 2
			if v > 0o377 {
				return item{}, t.errf(pos, "octal escape value \\%s outside of range 0-0o377", string(t.src[pos+1:t.i]))
			}
			return item{s: lit(v), repeat: true}, nil
		}
		j := t.i
		if j < len(t.src) && t.src[j] >= '0' && t.src[j] <= '9' {
			j++
		}
		ref := string(t.src[pos+1 : j])
		t.i = j
		if n, _ := strconv.Atoi(ref); n > t.ngroups {
			return item{}, t.errf(pos+1, "invalid group reference %d", n)
		}
		return item{}, t.unsupported(pos, "the backreference \\"+ref, "capture the group and compare it in code, e.g. m.group(1) == m.group(2)")
	}
	r, err := t.charEscape(c, pos, false)
	if err != nil {
		return item{}, err
	}
	return item{s: lit(r), repeat: true}, nil
}

func isOct(r rune) bool { return r >= '0' && r <= '7' }

func hexv(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return -1
}

// charEscape decodes an escape standing for one character; c was read.
func (t *translator) charEscape(c rune, pos int, inClass bool) (rune, error) {
	switch c {
	case 'a':
		return 7, nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'v':
		return '\v', nil
	case 'b':
		if inClass {
			return '\b', nil
		}
	case 'x', 'u', 'U':
		n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[c]
		v := 0
		for k := 0; k < n; k++ {
			if t.i >= len(t.src) || hexv(t.src[t.i]) < 0 {
				return 0, t.errf(pos, "incomplete escape %s", string(t.src[pos:t.i]))
			}
			v = v*16 + hexv(t.src[t.i])
			t.i++
		}
		if v > 0x10ffff {
			return 0, t.errf(pos, "bad escape %s", string(t.src[pos:t.i]))
		}
		return rune(v), nil
	case 'N':
		return 0, t.unsupported(pos, "the named character escape \\N{…}", "write the character itself or \\uXXXX")
	case '0':
		v := 0
		for k := 0; k < 2 && t.i < len(t.src) && isOct(t.src[t.i]); k++ {
			v = v*8 + int(t.src[t.i]-'0')
			t.i++
		}
		return rune(v), nil
	}
	if inClass && c >= '1' && c <= '7' {
		v := int(c - '0')
		for k := 0; k < 2 && t.i < len(t.src) && isOct(t.src[t.i]); k++ {
			v = v*8 + int(t.src[t.i]-'0')
			t.i++
		}
		if v > 0o377 {
			return 0, t.errf(pos, "octal escape value %s outside of range 0-0o377", string(t.src[pos:t.i]))
		}
		return rune(v), nil
	}
	if c < 0x80 && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
		return 0, t.errf(pos, "bad escape \\%c", c)
	}
	return c, nil
}

// class translates [...] starting after '['.
func (t *translator) class(fl Flags, pos int) (string, error) {
	neg := false
	if t.i < len(t.src) && t.src[t.i] == '^' {
		neg = true
		t.i++
	}
	var parts []string
	var negParts []string // negated shorthands (\D \W \S) inside the class
	first := true
	for {
		if t.i >= len(t.src) {
			return "", t.errf(pos, "unterminated character set")
		}
		c := t.src[t.i]
		if c == ']' && !first {
			t.i++
			break
		}
		first = false
		start := t.i
		t.i++
		var lo rune
		if c == '\\' {
			if t.i >= len(t.src) {
				return "", t.errf(start, "bad escape (end of pattern)")
			}
			e := t.src[t.i]
			t.i++
			if strings.ContainsRune("dwsDWS", e) {
				s, _ := shorthand(e, fl)
				if strings.HasPrefix(s, "[^") {
					negParts = append(negParts, s[2:len(s)-1])
				} else if strings.HasPrefix(s, "[") {
					parts = append(parts, s[1:len(s)-1])
				} else {
					parts = append(parts, s)
				}
				if t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != ']' {
					return "", t.errf(start, "bad character range %s", string(t.src[start:t.i+2]))
				}
				continue
			}
			r, err := t.charEscape(e, start, true)
			if err != nil {
				return "", err
			}
			lo = r
		} else {
			lo = c
		}
		// range?
		if t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != ']' {
			t.i++
			hs := t.i
			h := t.src[t.i]
			t.i++
			var hi rune
			if h == '\\' {
				if t.i >= len(t.src) {
					return "", t.errf(hs, "bad escape (end of pattern)")
				}
				e := t.src[t.i]
				t.i++
				if strings.ContainsRune("dwsDWS", e) {
					return "", t.errf(start, "bad character range %s", string(t.src[start:t.i]))
				}
				r, err := t.charEscape(e, hs, true)
				if err != nil {
					return "", err
				}
				hi = r
			} else {
				hi = h
			}
			if hi < lo {
				return "", t.errf(start, "bad character range %s", string(t.src[start:t.i]))
			}
			parts = append(parts, fmt.Sprintf(`\x{%x}-\x{%x}`, lo, hi))
			continue
		}
		parts = append(parts, fmt.Sprintf(`\x{%x}`, lo))
	}
	pos_ := strings.Join(parts, "")
	if len(negParts) == 0 {
		if pos_ == "" {
			if neg {
				return `(?s:.)`, nil
			}
			return `[^\x{0}-\x{10ffff}]`, nil
		}
		if neg {
			return "[^" + pos_ + "]", nil
		}
		return "[" + pos_ + "]", nil
	}
	if !neg {
		alts := []string{}
		if pos_ != "" {
			alts = append(alts, "["+pos_+"]")
		}
		for _, n := range negParts {
			alts = append(alts, "[^"+n+"]")
		}
		return "(?:" + strings.Join(alts, "|") + ")", nil
	}
	// [^ ... \W ...]: outside every listed set and inside every negated one.
	return "", t.unsupported(pos, "a negated class holding \\D, \\W or \\S", "write the wanted characters as a positive class, e.g. [a-zA-Z] for [^\\W\\d_]")
}
