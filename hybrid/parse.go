package hybrid

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tQIdent
	tString
	tNumber
	tPlaceholder
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind  tokKind
	text  string // identifier / operator text, string literal content
	pos   int
	val   Value  // tNumber
	pkind string // tPlaceholder: "text" or "image"
	pidx  int    // tPlaceholder index
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return fmt.Sprintf("string '%s'", truncate(t.text, 40))
	case tQIdent:
		return fmt.Sprintf("%q", t.text)
	case tPlaceholder:
		return fmt.Sprintf("<%s_%d>", t.pkind, t.pidx)
	}
	return fmt.Sprintf("%q", truncate(t.text, 40))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// keywords the grammar uses.
var grammarWords = map[string]bool{"WHERE": true, "AND": true, "OR": true, "NOT": true, "IN": true,
	"BETWEEN": true, "LIKE": true, "IS": true, "NULL": true}

// forbiddenWords are SQL keywords that have no place in one WHERE
// expression; an unquoted one is rejected with ErrRejected.
var forbiddenWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`SELECT UNION INTERSECT EXCEPT FROM JOIN ATTACH DETACH PRAGMA INSERT UPDATE
		DELETE DROP CREATE ALTER REPLACE VACUUM WITH EXISTS CASE WHEN THEN ELSE END CAST COLLATE ESCAPE GLOB
		REGEXP MATCH ORDER GROUP LIMIT HAVING OFFSET INTO VALUES BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE
		ANALYZE REINDEX EXPLAIN TRIGGER VIEW TABLE INDEX RETURNING WINDOW OVER DATABASE TRANSACTION`) {
		forbiddenWords[w] = true
	}
}

// Functions allowed on the left side of a predicate, with SQLite's
// built-in semantics: lower/upper fold ASCII letters only (no ICU),
// length counts characters.
var allowedFuncs = map[string]bool{"LOWER": true, "UPPER": true, "LENGTH": true}

type lexer struct {
	src  string
	pos  int
	lim  Limits
	toks []token
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func lex(src string, lim Limits) ([]token, error) {
	lx := &lexer{src: src, lim: lim}
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		lx.toks = append(lx.toks, t)
		if t.kind == tEOF {
			return lx.toks, nil
		}
	}
}

func (lx *lexer) next() (token, error) {
	s := lx.src
	for lx.pos < len(s) && (s[lx.pos] == ' ' || s[lx.pos] == '\t' || s[lx.pos] == '\n' || s[lx.pos] == '\r' || s[lx.pos] == '\f') {
		lx.pos++
	}
	start := lx.pos
	if start >= len(s) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := s[start]
	peek := func(i int) byte {
		if start+i < len(s) {
			return s[start+i]
		}
		return 0
	}
	switch {
	case c == '-' && peek(1) == '-', c == '/' && peek(1) == '*', c == '#':
		return token{}, errAt(ErrRejected, start, "comments are not allowed (%q starts a comment)", s[start:start+min(2, len(s)-start)])
	case c == ';':
		return token{}, errAt(ErrRejected, start, "';' would end the statement: a program is exactly one WHERE expression (stacked statements are rejected)")
	case c == '\'':
		return lx.lexString()
	case c == '"':
		return lx.lexQuotedIdent()
	case c == '`' || c == '[':
		return token{}, errAt(ErrSyntax, start, "identifiers are quoted with double quotes (\"From\"), not %q", string(c))
	case c >= '0' && c <= '9', c == '.' && peek(1) >= '0' && peek(1) <= '9':
		return lx.lexNumber()
	case isIdentStart(c):
		for lx.pos < len(s) && isIdentChar(s[lx.pos]) {
			lx.pos++
		}
		return token{kind: tIdent, text: s[start:lx.pos], pos: start}, nil
	case c == '<':
		if t, ok, err := lx.lexPlaceholder(); ok || err != nil {
			return t, err
		}
		if peek(1) == '=' || peek(1) == '>' {
			return lx.op(start, 2), nil // <= <>
		}
		return lx.op(start, 1), nil
	case c == '>' || c == '=':
		if peek(1) == '=' {
			return lx.op(start, 2), nil // >= ==
		}
		return lx.op(start, 1), nil
	case c == '!':
		if peek(1) == '=' {
			return lx.op(start, 2), nil
		}
		return token{}, errAt(ErrSyntax, start, "'!' must be followed by '=' (use NOT for negation)")
	case c == '-' || c == '+':
		return lx.op(start, 1), nil
	case c == '(':
		lx.pos++
		return token{kind: tLParen, text: "(", pos: start}, nil
	case c == ')':
		lx.pos++
		return token{kind: tRParen, text: ")", pos: start}, nil
	case c == ',':
		lx.pos++
		return token{kind: tComma, text: ",", pos: start}, nil
	case c == '?' || c == ':' || c == '@' || c == '$':
		return token{}, errAt(ErrRejected, start, "bound parameters (%q) are not allowed: write literal values", string(c))
	case c == '|' || c == '*' || c == '/' || c == '%' || c == '&' || c == '~':
		return token{}, errAt(ErrRejected, start, "operator %q is not allowed: predicates compare a column with literals", string(c))
	}
	r, size := utf8.DecodeRuneInString(s[start:])
	switch r {
	case '‘', '’', '“', '”', '′', '´':
		return token{}, errAt(ErrSyntax, start, "typographic quote %q: string literals use ASCII single quotes ('Nike'), identifiers ASCII double quotes", string(r))
	}
	if r == utf8.RuneError && size <= 1 {
		return token{}, errAt(ErrSyntax, start, "invalid UTF-8 byte 0x%02x outside a string literal", c)
	}
	return token{}, errAt(ErrSyntax, start, "unexpected character %q", string(r))
}

// op consumes the n-byte operator at start.
func (lx *lexer) op(start, n int) token {
	lx.pos = start + n
	return token{kind: tOp, text: lx.src[start:lx.pos], pos: start}
}

// quoted reads the text quoted by q at lx.pos (q doubled inside stands
// for itself), moves past the closing q and returns the text; ok is false
// when no closing q follows.
func (lx *lexer) quoted(q byte) (text string, ok bool) {
	s := lx.src
	var b strings.Builder
	i := lx.pos + 1
	for {
		j := strings.IndexByte(s[i:], q)
		if j < 0 {
			return "", false
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == q {
			b.WriteByte(q)
			i++
			continue
		}
		lx.pos = i
		return b.String(), true
	}
}

func (lx *lexer) lexString() (token, error) {
	s, start := lx.src, lx.pos
	text, ok := lx.quoted('\'')
	if !ok {
		return token{}, errAt(ErrSyntax, start, "unterminated string literal '%s (an apostrophe inside a string is written twice: 'Children''s')", truncate(s[start+1:], 30))
	}
	i := lx.pos
	if len(text) > lx.lim.MaxStringBytes {
		return token{}, errAt(ErrLimit, start, "string literal of %d bytes is longer than %d bytes", len(text), lx.lim.MaxStringBytes)
	}
	if i < len(s) && isIdentChar(s[i]) {
		// 'Children's Toys': the literal closed at an apostrophe that
		// belongs to the word (the error the paper's trained models make).
		k := i
		for k < len(s) && isIdentChar(s[k]) {
			k++
		}
		return token{}, errAt(ErrSyntax, i-1, "unescaped apostrophe in string literal '%s': it ends the literal before %q; write the apostrophe twice, as in '%s''%s'",
			truncate(text, 40), s[i:k], truncate(strings.ReplaceAll(text, "'", "''"), 40), s[i:k])
	}
	return token{kind: tString, text: text, pos: start}, nil
}

func (lx *lexer) lexQuotedIdent() (token, error) {
	start := lx.pos
	name, ok := lx.quoted('"')
	if !ok {
		return token{}, errAt(ErrSyntax, start, "unterminated quoted identifier %s", truncate(lx.src[start:], 30))
	}
	if !nameRE.MatchString(name) {
		return token{}, errAt(ErrCheck, start, "quoted identifier %q is not a column name of this DSL", truncate(name, 40))
	}
	return token{kind: tQIdent, text: name, pos: start}, nil
}

func (lx *lexer) lexNumber() (token, error) {
	s, start := lx.src, lx.pos
	i := start
	if s[i] == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X') {
		return token{}, errAt(ErrSyntax, start, "hexadecimal literals are not supported")
	}
	real := false
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		real = true
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			real = true
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	lx.pos = i
	text := s[start:i]
	if i < len(s) && (isIdentChar(s[i]) || s[i] == '.') {
		return token{}, errAt(ErrSyntax, start, "malformed number %q", truncate(s[start:min(len(s), i+8)], 40))
	}
	if len(text) > lx.lim.MaxNumberDigits {
		return token{}, errAt(ErrLimit, start, "numeric literal of %d characters is longer than %d", len(text), lx.lim.MaxNumberDigits)
	}
	v := Value{At: start}
	if real {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > lx.lim.MaxAbsNumber {
			return token{}, errAt(ErrLimit, start, "numeric literal %s is out of range (|x| <= %g)", truncate(text, 40), lx.lim.MaxAbsNumber)
		}
		v.Kind, v.F = ValReal, f
	} else {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || math.Abs(float64(n)) > lx.lim.MaxAbsNumber {
			return token{}, errAt(ErrLimit, start, "numeric literal %s is out of range (|x| <= %g)", truncate(text, 40), lx.lim.MaxAbsNumber)
		}
		v.Kind, v.I = ValInt, n
	}
	return token{kind: tNumber, text: text, pos: start, val: v}, nil
}

// lexPlaceholder reads <text_N> or <image_N>; ok is false when the input
// at the current position is an ordinary '<' operator.
func (lx *lexer) lexPlaceholder() (token, bool, error) {
	s, start := lx.src, lx.pos
	i := start + 1
	j := i
	for j < len(s) && isIdentChar(s[j]) {
		j++
	}
	word := s[i:j]
	if j >= len(s) || s[j] != '>' || word == "" {
		return token{}, false, nil
	}
	kind, num, ok := strings.Cut(word, "_")
	if ok {
		kind = strings.ToLower(kind)
	}
	if !ok || (kind != "text" && kind != "image") {
		return token{}, true, errAt(ErrSyntax, start, "unknown placeholder <%s>: placeholders are <text_N> and <image_N>", truncate(word, 30))
	}
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return token{}, true, errAt(ErrSyntax, start, "placeholder <%s> must end in a number, as in <%s_0>", truncate(word, 30), kind)
	}
	if len(num) > 3 {
		return token{}, true, errAt(ErrLimit, start, "placeholder <%s> is out of range", truncate(word, 30))
	}
	n, _ := strconv.Atoi(num)
	lx.pos = j + 1
	return token{kind: tPlaceholder, text: s[start:lx.pos], pos: start, pkind: kind, pidx: n}, true, nil
}

type parser struct {
	toks  []token
	i     int
	lim   Limits
	nodes int
	depth int
}

// Parse parses a program's sql text ("WHERE <conditions>"; the leading
// WHERE is optional) into an AST. It checks syntax and the limits only;
// Check validates the tree against a schema and a retrieval_list.
//
// Errors are *Error values wrapping ErrSyntax, ErrRejected or ErrLimit
// (and rlsearch.ErrBadInput), naming the byte position. Parse never panics
// and is safe for concurrent use; lim's zero fields mean the defaults.
func Parse(sql string, lim Limits) (Expr, error) {
	lim = lim.withDefaults()
	if len(sql) > lim.MaxSQLBytes {
		return nil, errAt(ErrLimit, 0, "sql of %d bytes is longer than %d bytes", len(sql), lim.MaxSQLBytes)
	}
	toks, err := lex(sql, lim)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, lim: lim}
	if t := p.peek(); t.kind == tIdent && strings.EqualFold(t.text, "WHERE") {
		p.i++
	}
	if p.peek().kind == tEOF {
		return nil, errAt(ErrSyntax, p.peek().pos, "empty WHERE expression")
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		if err := p.rejectWord(t); err != nil {
			return nil, err
		}
		return nil, errAt(ErrSyntax, t.pos, "unexpected %s after the end of the expression (missing AND/OR?)", t.describe())
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) nextTok() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isWord(w string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, w)
}

func (p *parser) node(pos int) error {
	p.nodes++
	if p.nodes > p.lim.MaxNodes {
		return errAt(ErrLimit, pos, "expression has more than %d nodes", p.lim.MaxNodes)
	}
	return nil
}

// rejectWord returns ErrRejected for forbidden SQL keywords.
func (p *parser) rejectWord(t token) error {
	if t.kind != tIdent {
		return nil
	}
	w := strings.ToUpper(t.text)
	if !forbiddenWords[w] {
		return nil
	}
	switch w {
	case "SELECT":
		return errAt(ErrRejected, t.pos, "SELECT is not allowed: subqueries and further statements are rejected, a program is one WHERE expression")
	case "UNION", "INTERSECT", "EXCEPT":
		return errAt(ErrRejected, t.pos, "%s is not allowed: a program is one WHERE expression", w)
	case "ATTACH", "DETACH", "PRAGMA":
		return errAt(ErrRejected, t.pos, "%s is not allowed: programs cannot touch the database configuration", w)
	}
	return errAt(ErrRejected, t.pos, "SQL keyword %s is not allowed in a WHERE expression (a column with this name is written in double quotes: \"%s\")", w, strings.ToLower(w))
}

func (p *parser) parseOr() (Expr, error) { return p.parseLogic("OR", p.parseAnd) }

func (p *parser) parseAnd() (Expr, error) { return p.parseLogic("AND", p.parseNot) }

// parseLogic parses operand (op operand)*: one operand as itself, more as
// one Logic node (OR over ANDs over NOTs: SQL's precedence).
func (p *parser) parseLogic(op string, operand func() (Expr, error)) (Expr, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	if !p.isWord(op) {
		return first, nil
	}
	l := &Logic{Op: op, Args: []Expr{first}, At: first.Pos()}
	for p.isWord(op) {
		p.i++
		x, err := operand()
		if err != nil {
			return nil, err
		}
		l.Args = append(l.Args, x)
	}
	return l, p.node(l.At)
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return errAt(ErrLimit, pos, "expression nests deeper than %d levels", p.lim.MaxDepth)
	}
	return nil
}

func (p *parser) parseNot() (Expr, error) {
	if p.isWord("NOT") {
		t := p.nextTok()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		x, err := p.parseNot()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &Not{X: x, At: t.pos}, p.node(t.pos)
	}
	return p.parsePredicate()
}

func (p *parser) parsePredicate() (Expr, error) {
	t := p.peek()
	switch t.kind {
	case tLParen:
		p.i++
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		if p.isWord("SELECT") {
			return nil, errAt(ErrRejected, p.peek().pos, "subqueries are not allowed")
		}
		x, err := p.parseOr()
		p.depth--
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRParen {
			if err := p.rejectWord(c); err != nil {
				return nil, err
			}
			return nil, errAt(ErrSyntax, c.pos, "expected ')' to close '(' at position %d, found %s", t.pos, c.describe())
		}
		p.i++
		return x, nil
	case tEOF:
		return nil, errAt(ErrSyntax, t.pos, "expression ends where a condition was expected")
	case tString, tNumber:
		return nil, errAt(ErrSyntax, t.pos, "a condition starts with a column, not the literal %s (write price > 5, not 5 < price)", t.describe())
	case tPlaceholder:
		return nil, errAt(ErrSyntax, t.pos, "placeholder %s must follow IN, as in product_id IN %s", t.describe(), t.describe())
	case tIdent, tQIdent:
	default:
		return nil, errAt(ErrSyntax, t.pos, "unexpected %s where a condition was expected", t.describe())
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if err := p.node(left.At); err != nil {
		return nil, err
	}
	t = p.peek()
	switch {
	case t.kind == tOp && t.text != "-" && t.text != "+":
		p.i++
		op := t.text
		switch op {
		case "==":
			op = "="
		case "<>":
			op = "!="
		}
		v, err := p.parseValue(op)
		if err != nil {
			return nil, err
		}
		return &Cmp{Left: left, Op: op, Right: v}, nil
	case p.isWord("IS"):
		p.i++
		neg := false
		if p.isWord("NOT") {
			p.i++
			neg = true
		}
		if !p.isWord("NULL") {
			return nil, errAt(ErrSyntax, p.peek().pos, "IS must be followed by NULL or NOT NULL")
		}
		p.i++
		return &IsNull{Left: left, Negate: neg}, nil
	}
	neg := false
	if p.isWord("NOT") {
		p.i++
		neg = true
	}
	switch {
	case p.isWord("IN"):
		p.i++
		return p.parseIn(left, neg)
	case p.isWord("BETWEEN"):
		p.i++
		lo, err := p.parseValue("BETWEEN")
		if err != nil {
			return nil, err
		}
		if !p.isWord("AND") {
			return nil, errAt(ErrSyntax, p.peek().pos, "BETWEEN needs AND, as in price BETWEEN 10 AND 20")
		}
		p.i++
		hi, err := p.parseValue("BETWEEN")
		if err != nil {
			return nil, err
		}
		return &Between{Left: left, Negate: neg, Lo: lo, Hi: hi}, nil
	case p.isWord("LIKE"):
		p.i++
		v, err := p.parseValue("LIKE")
		if err != nil {
			return nil, err
		}
		return &Like{Left: left, Negate: neg, Pattern: v}, nil
	}
	t = p.peek()
	if err := p.rejectWord(t); err != nil {
		return nil, err
	}
	return nil, errAt(ErrSyntax, t.pos, "expected a comparison (= != < <= > >=), IN, BETWEEN, LIKE or IS after %s, found %s", left.Column, t.describe())
}

func (p *parser) parseOperand() (Operand, error) {
	t := p.nextTok()
	if t.kind == tIdent {
		if err := p.rejectWord(t); err != nil {
			return Operand{}, err
		}
		if grammarWords[strings.ToUpper(t.text)] {
			return Operand{}, errAt(ErrSyntax, t.pos, "keyword %s where a column was expected", strings.ToUpper(t.text))
		}
		if p.peek().kind == tLParen {
			fn := strings.ToUpper(t.text)
			if !allowedFuncs[fn] {
				return Operand{}, errAt(ErrRejected, t.pos, "function %s is not allowed (allowed: LENGTH, LOWER, UPPER)", truncate(t.text, 40))
			}
			open := p.nextTok()
			arg := p.nextTok()
			if arg.kind != tIdent && arg.kind != tQIdent {
				if err := p.rejectWord(arg); err != nil {
					return Operand{}, err
				}
				return Operand{}, errAt(ErrSyntax, arg.pos, "the argument of %s must be a column, found %s", fn, arg.describe())
			}
			if arg.kind == tIdent {
				if err := p.rejectWord(arg); err != nil {
					return Operand{}, err
				}
			}
			if c := p.nextTok(); c.kind != tRParen {
				return Operand{}, errAt(ErrSyntax, c.pos, "expected ')' to close %s( at position %d, found %s", fn, open.pos, c.describe())
			}
			return Operand{Func: fn, Column: arg.text, At: t.pos}, nil
		}
	}
	return Operand{Column: t.text, At: t.pos}, nil
}

func (p *parser) parseValue(ctx string) (Value, error) {
	t := p.nextTok()
	sign := ""
	if t.kind == tOp && (t.text == "-" || t.text == "+") {
		sign = t.text
		n := p.nextTok()
		if n.kind != tNumber {
			return Value{}, errAt(ErrSyntax, n.pos, "expected a number after %q, found %s", sign, n.describe())
		}
		v := n.val
		v.At = t.pos
		if sign == "-" {
			v.I, v.F = -v.I, -v.F
		}
		return v, nil
	}
	switch t.kind {
	case tString:
		return Value{Kind: ValString, S: nfcString(t.text), At: t.pos}, nil // Unicode-equal literals are equal (nfc.go)
	case tNumber:
		return t.val, nil
	case tPlaceholder:
		return Value{}, errAt(ErrSyntax, t.pos, "placeholder %s is used with IN, as in product_id IN %s", t.describe(), t.describe())
	case tIdent:
		if err := p.rejectWord(t); err != nil {
			return Value{}, err
		}
		if strings.EqualFold(t.text, "NULL") {
			return Value{}, errAt(ErrSyntax, t.pos, "NULL is not a value to compare with: use IS NULL or IS NOT NULL")
		}
		if p.peek().kind == tLParen {
			return Value{}, errAt(ErrRejected, t.pos, "function calls are not allowed on the right side of %s", ctx)
		}
		return Value{}, errAt(ErrSyntax, t.pos, "the right side of %s must be a literal, found %s (strings are quoted: '%s')", ctx, t.describe(), truncate(t.text, 40))
	case tQIdent:
		return Value{}, errAt(ErrSyntax, t.pos, "the right side of %s must be a literal, found the identifier %s (strings use single quotes)", ctx, t.describe())
	case tLParen:
		if p.isWord("SELECT") {
			return Value{}, errAt(ErrRejected, p.peek().pos, "subqueries are not allowed")
		}
	}
	return Value{}, errAt(ErrSyntax, t.pos, "expected a literal after %s, found %s", ctx, t.describe())
}

func (p *parser) parseIn(left Operand, neg bool) (Expr, error) {
	t := p.nextTok()
	if t.kind == tPlaceholder {
		if left.Func != "" {
			return nil, errAt(ErrSyntax, left.At, "%s IN %s: placeholders test the id column itself, without a function", left.Func, t.describe())
		}
		return &InSet{Column: left.Column, Negate: neg, Kind: t.pkind, Index: t.pidx, At: left.At}, nil
	}
	if t.kind != tLParen {
		return nil, errAt(ErrSyntax, t.pos, "IN must be followed by a placeholder (<text_0>) or a parenthesised list of literals, found %s", t.describe())
	}
	if p.isWord("SELECT") {
		return nil, errAt(ErrRejected, p.peek().pos, "subqueries are not allowed")
	}
	if p.peek().kind == tRParen {
		return nil, errAt(ErrSyntax, p.peek().pos, "empty IN list")
	}
	l := &InList{Left: left, Negate: neg}
	for {
		v, err := p.parseValue("IN")
		if err != nil {
			return nil, err
		}
		l.Values = append(l.Values, v)
		if len(l.Values) > p.lim.MaxInList {
			return nil, errAt(ErrLimit, v.At, "IN list has more than %d values", p.lim.MaxInList)
		}
		c := p.nextTok()
		if c.kind == tRParen {
			return l, nil
		}
		if c.kind != tComma {
			return nil, errAt(ErrSyntax, c.pos, "expected ',' or ')' in the IN list opened at position %d, found %s", t.pos, c.describe())
		}
	}
}
