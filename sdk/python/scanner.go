package python

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind int

const (
	tEOF tokKind = iota
	tNewline
	tIndent
	tDedent
	tName
	tInt
	tFloat
	tString  // a plain string literal, already decoded
	tFString // an f-string: raw body, decoded by the parser
	tOp
)

type token struct {
	kind tokKind
	line int
	s    string   // name, operator, decoded string, f-string body
	i    int64    // tInt that fits in int64
	big  *big.Int // tInt that does not
	f    float64  // tFloat
	raw  bool     // tFString: the r prefix was given
	imag bool     // a j suffix (refused)
}

// Error is a syntax error or a refused construct, with the 1-based line.
type Error struct {
	Line        int
	Msg         string
	Unsupported bool // a construct the sandbox refuses on purpose (unsupported_feature)
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return e.Msg
}

func syntaxErr(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...)}
}

func refuse(line int, format string, args ...any) *Error {
	return &Error{Line: line, Msg: fmt.Sprintf(format, args...), Unsupported: true}
}

// scanner turns source into tokens, with Python's indentation rules and
// implicit line joining inside brackets.
type scanner struct {
	src    string
	pos    int
	line   int
	indent []int
	depth  int // bracket depth
	toks   []token
	atBOL  bool
}

// maxIndentDepth bounds nesting so that the recursive parser and compiler
// cannot exhaust the Go stack.
const maxIndentDepth = 100

func scan(src string) ([]token, error) {
	s := &scanner{src: src, line: 1, indent: []int{0}, atBOL: true}
	if err := s.run(); err != nil {
		return nil, err
	}
	return s.toks, nil
}

func (s *scanner) emit(t token) {
	t.line = s.line
	s.toks = append(s.toks, t)
}

func (s *scanner) run() error {
	for {
		if s.atBOL && s.depth == 0 {
			if err := s.lineStart(); err != nil {
				return err
			}
			if s.pos >= len(s.src) {
				break
			}
		}
		if s.pos >= len(s.src) {
			break
		}
		c := s.src[s.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\r':
			s.pos++
		case c == '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		case c == '\\':
			if s.pos+1 < len(s.src) && s.src[s.pos+1] == '\n' {
				s.pos += 2
				s.line++
			} else if s.pos+2 < len(s.src) && s.src[s.pos+1] == '\r' && s.src[s.pos+2] == '\n' {
				s.pos += 3
				s.line++
			} else {
				return syntaxErr(s.line, "unexpected character after line continuation character `\\`")
			}
		case c == '\n':
			s.pos++
			if s.depth == 0 {
				s.emit(token{kind: tNewline})
				s.atBOL = true
			}
			s.line++
		case c >= '0' && c <= '9' || c == '.' && s.pos+1 < len(s.src) && isDigit(s.src[s.pos+1]):
			if err := s.number(); err != nil {
				return err
			}
		case c == '"' || c == '\'':
			if err := s.str("", s.pos); err != nil {
				return err
			}
		case c < utf8.RuneSelf && (c == '_' || unicode.IsLetter(rune(c))) || c >= utf8.RuneSelf:
			start := s.pos
			for s.pos < len(s.src) {
				r, n := utf8.DecodeRuneInString(s.src[s.pos:])
				if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
					s.pos += n
					continue
				}
				break
			}
			if s.pos == start {
				r, _ := utf8.DecodeRuneInString(s.src[s.pos:])
				return syntaxErr(s.line, "invalid character %q (U+%04X) in the program", r, r)
			}
			name := s.src[start:s.pos]
			if s.pos < len(s.src) && (s.src[s.pos] == '"' || s.src[s.pos] == '\'') && len(name) <= 2 {
				lp := strings.ToLower(name)
				switch lp {
				case "r", "u", "f", "b", "rf", "fr", "br", "rb":
					if strings.Contains(lp, "b") {
						return refuse(s.line, "bytes literals (b\"...\") are not supported; use a plain string \"...\"")
					}
					if err := s.str(lp, s.pos); err != nil {
						return err
					}
					continue
				}
			}
			s.emit(token{kind: tName, s: name})
		default:
			if err := s.op(); err != nil {
				return err
			}
		}
	}
	if s.depth > 0 {
		return syntaxErr(s.line, "unexpected end of program: a bracket `(`, `[` or `{` is never closed")
	}
	if n := len(s.toks); n > 0 && s.toks[n-1].kind != tNewline && s.toks[n-1].kind != tDedent {
		s.emit(token{kind: tNewline})
	}
	for len(s.indent) > 1 {
		s.indent = s.indent[:len(s.indent)-1]
		s.emit(token{kind: tDedent})
	}
	s.emit(token{kind: tEOF})
	return nil
}

// lineStart measures the indentation of a logical line and emits INDENT or
// DEDENT tokens; blank and comment-only lines are skipped.
func (s *scanner) lineStart() error {
	for s.pos < len(s.src) {
		col := 0
		p := s.pos
		for p < len(s.src) {
			switch s.src[p] {
			case ' ':
				col++
			case '\t':
				col = (col/8 + 1) * 8
			case '\f', '\r':
			default:
				goto done
			}
			p++
		}
	done:
		if p >= len(s.src) {
			s.pos = p
			return nil
		}
		if s.src[p] == '\n' || s.src[p] == '#' {
			for p < len(s.src) && s.src[p] != '\n' {
				p++
			}
			if p < len(s.src) {
				p++
				s.line++
			}
			s.pos = p
			continue
		}
		if s.src[p] == '\\' && p+1 < len(s.src) && s.src[p+1] == '\n' {
			// a continuation line at the start: treat as part of this line
		}
		s.pos = p
		s.atBOL = false
		cur := s.indent[len(s.indent)-1]
		switch {
		case col > cur:
			if len(s.indent) > maxIndentDepth {
				return syntaxErr(s.line, "blocks nested more than %d deep; flatten the program with helper functions", maxIndentDepth)
			}
			s.indent = append(s.indent, col)
			s.emit(token{kind: tIndent})
		case col < cur:
			for col < s.indent[len(s.indent)-1] {
				s.indent = s.indent[:len(s.indent)-1]
				s.emit(token{kind: tDedent})
			}
			if col != s.indent[len(s.indent)-1] {
				return syntaxErr(s.line, "unindent does not match any outer indentation level; indent with the same number of spaces as the block it closes")
			}
		}
		return nil
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= utf8.RuneSelf
}

func (s *scanner) number() error {
	start := s.pos
	src := s.src
	if src[s.pos] == '0' && s.pos+1 < len(src) && strings.IndexByte("xXoObB", src[s.pos+1]) >= 0 {
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[src[s.pos+1]|0x20]
		s.pos += 2
		for s.pos < len(src) && (isIdent(src[s.pos])) {
			s.pos++
		}
		digits := strings.ReplaceAll(src[start+2:s.pos], "_", "")
		if digits == "" || strings.HasPrefix(src[start+2:s.pos], "__") || strings.HasSuffix(src[start+2:s.pos], "_") {
			return syntaxErr(s.line, "invalid number literal %q", src[start:s.pos])
		}
		return s.emitInt(digits, base, src[start:s.pos])
	}
	isFloat := false
	for s.pos < len(src) && (isDigit(src[s.pos]) || src[s.pos] == '_') {
		s.pos++
	}
	if s.pos < len(src) && src[s.pos] == '.' {
		isFloat = true
		s.pos++
		for s.pos < len(src) && (isDigit(src[s.pos]) || src[s.pos] == '_') {
			s.pos++
		}
	}
	if s.pos < len(src) && (src[s.pos] == 'e' || src[s.pos] == 'E') {
		p := s.pos + 1
		if p < len(src) && (src[p] == '+' || src[p] == '-') {
			p++
		}
		if p < len(src) && isDigit(src[p]) {
			isFloat = true
			s.pos = p
			for s.pos < len(src) && (isDigit(src[s.pos]) || src[s.pos] == '_') {
				s.pos++
			}
		}
	}
	text := src[start:s.pos]
	if s.pos < len(src) && (src[s.pos] == 'j' || src[s.pos] == 'J') {
		return refuse(s.line, "complex numbers (%sj) are not supported; use floats", text)
	}
	if s.pos < len(src) && isIdent(src[s.pos]) {
		for s.pos < len(src) && isIdent(src[s.pos]) {
			s.pos++
		}
		return syntaxErr(s.line, "invalid number literal %q", src[start:s.pos])
	}
	if strings.Contains(text, "__") || strings.HasSuffix(text, "_") || strings.Contains(text, "_.") || strings.Contains(text, "._") {
		return syntaxErr(s.line, "invalid number literal %q (an underscore goes only between digits: 1_000)", text)
	}
	clean := strings.ReplaceAll(text, "_", "")
	if isFloat {
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				s.emit(token{kind: tFloat, f: f})
				return nil
			}
			return syntaxErr(s.line, "invalid number literal %q", text)
		}
		s.emit(token{kind: tFloat, f: f})
		return nil
	}
	if len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
		return syntaxErr(s.line, "leading zeros in a decimal integer literal (%s) are not permitted; write %s, or 0o%s for octal", text, strings.TrimLeft(clean, "0"), strings.TrimLeft(clean, "0"))
	}
	return s.emitInt(clean, 10, text)
}

func (s *scanner) emitInt(digits string, base int, text string) error {
	if v, err := strconv.ParseInt(digits, base, 64); err == nil {
		s.emit(token{kind: tInt, i: v})
		return nil
	}
	b, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return syntaxErr(s.line, "invalid number literal %q", text)
	}
	if b.BitLen() > 4096 {
		return syntaxErr(s.line, "integer literal of %d bits is too large", b.BitLen())
	}
	s.emit(token{kind: tInt, big: b})
	return nil
}

// str scans a string literal whose quote starts at q; prefix is the
// lower-cased prefix (r, u, f, rf).
func (s *scanner) str(prefix string, q int) error {
	src := s.src
	quote := src[q]
	triple := q+2 < len(src) && src[q+1] == quote && src[q+2] == quote
	startLine := s.line
	p := q + 1
	if triple {
		p = q + 3
	}
	bodyStart := p
	for {
		if p >= len(src) {
			if triple {
				return syntaxErr(startLine, "unterminated triple-quoted string literal; close it with %s", strings.Repeat(string(quote), 3))
			}
			return syntaxErr(startLine, "unterminated string literal; close it with %c on the same line", quote)
		}
		c := src[p]
		if c == '\\' {
			if p+1 < len(src) && src[p+1] == '\n' {
				s.line++
			}
			p += 2
			continue
		}
		if c == '\n' {
			if !triple {
				return syntaxErr(startLine, "unterminated string literal; close it with %c on the same line (or use \\n)", quote)
			}
			s.line++
		}
		if c == quote {
			if !triple {
				break
			}
			if p+2 < len(src) && src[p+1] == quote && src[p+2] == quote {
				break
			}
		}
		p++
	}
	if p > len(src) {
		p = len(src)
	}
	body := src[bodyStart:min(p, len(src))]
	end := p + 1
	if triple {
		end = p + 3
	}
	s.pos = end
	raw := strings.Contains(prefix, "r")
	line := s.line
	s.line = startLine
	defer func() { s.line = line }()
	if strings.Contains(prefix, "f") {
		s.emit(token{kind: tFString, s: body, raw: raw})
		return nil
	}
	if raw {
		s.emit(token{kind: tString, s: strings.ReplaceAll(body, "\r\n", "\n")})
		return nil
	}
	dec, err := unescape(body, startLine)
	if err != nil {
		return err
	}
	s.emit(token{kind: tString, s: dec})
	return nil
}

// unescape decodes Python's backslash escapes.
func unescape(body string, line int) (string, *Error) {
	if strings.IndexByte(body, '\\') < 0 && strings.IndexByte(body, '\r') < 0 {
		return body, nil
	}
	var sb strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			sb.WriteByte(c)
			continue
		}
		i++
		c = body[i]
		switch c {
		case '\n':
		case '\\', '\'', '"':
			sb.WriteByte(c)
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte(8)
		case 'f':
			sb.WriteByte(12)
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(body[i:j], 8, 32)
			sb.WriteRune(rune(v))
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
			if i+n >= len(body)+0 && i+n > len(body)-1+1 {
				return "", syntaxErr(line, "truncated \\%c escape in a string literal (write \\%c followed by %d hex digits)", c, c, n)
			}
			hex := body[i+1 : min(i+1+n, len(body))]
			v, err := strconv.ParseUint(hex, 16, 32)
			if err != nil || len(hex) != n {
				return "", syntaxErr(line, "truncated \\%c escape in a string literal (write \\%c followed by %d hex digits)", c, c, n)
			}
			if v > unicode.MaxRune || v >= 0xD800 && v < 0xE000 {
				return "", syntaxErr(line, "illegal Unicode character \\%c%s in a string literal", c, hex)
			}
			sb.WriteRune(rune(v))
			i += n
		case 'N':
			return "", refuse(line, "\\N{...} escapes are not supported; write the character itself or \\uXXXX")
		default:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		}
	}
	return sb.String(), nil
}

var ops3 = []string{"**=", "//=", ">>=", "<<=", "...", "!="}
var ops2 = []string{"**", "//", "<<", ">>", "<=", ">=", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->", ":=", "@="}

func (s *scanner) op() error {
	rest := s.src[s.pos:]
	for _, o := range ops3 {
		if strings.HasPrefix(rest, o) {
			s.pos += len(o)
			s.emit(token{kind: tOp, s: o})
			return nil
		}
	}
	for _, o := range ops2 {
		if strings.HasPrefix(rest, o) {
			s.pos += len(o)
			s.emit(token{kind: tOp, s: o})
			return nil
		}
	}
	c := rest[0]
	switch c {
	case '(', '[', '{':
		s.depth++
		if s.depth > 200 {
			return syntaxErr(s.line, "brackets nested more than 200 deep")
		}
	case ')', ']', '}':
		if s.depth == 0 {
			return syntaxErr(s.line, "unmatched %q", c)
		}
		s.depth--
	}
	if strings.IndexByte("()[]{}:,;.+-*/%&|^~<>=@", c) >= 0 {
		s.pos++
		s.emit(token{kind: tOp, s: string(c)})
		return nil
	}
	r, _ := utf8.DecodeRuneInString(rest)
	switch r {
	case '$', '?', '`':
		return syntaxErr(s.line, "invalid character %q in the program", r)
	case '!':
		return syntaxErr(s.line, "invalid syntax `!`; Python writes `not x` for negation and `!=` for inequality")
	}
	return syntaxErr(s.line, "invalid character %q (U+%04X) in the program", r, r)
}
