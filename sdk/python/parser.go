package python

import (
	"strings"
)

// Parse parses a program. Errors are *Error: a syntax error, or a refused
// construct (Unsupported) with a message that names it, its line and a fix.
func Parse(src string) (mod *File, err error) {
	toks, err := scan(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			mod, err = nil, e
		}
	}()
	var body []Stmt
	for p.peek().kind != tEOF {
		if p.peek().kind == tNewline {
			p.next()
			continue
		}
		body = append(body, p.stmt()...)
	}
	return &File{Body: body}, nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

// maxExprDepth bounds expression nesting (the recursive descent and the
// compiler use the Go stack).
const maxExprDepth = 200

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekN(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}
func (p *parser) line() int { return p.peek().line }

func (p *parser) isOp(s string) bool {
	t := p.peek()
	return t.kind == tOp && t.s == s
}
func (p *parser) isKw(s string) bool {
	t := p.peek()
	return t.kind == tName && t.s == s
}
func (p *parser) acceptOp(s string) bool {
	if p.isOp(s) {
		p.next()
		return true
	}
	return false
}
func (p *parser) acceptKw(s string) bool {
	if p.isKw(s) {
		p.next()
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of program"
	case tNewline:
		return "end of line"
	case tIndent:
		return "an indented block"
	case tDedent:
		return "the end of a block"
	case tName:
		return "`" + t.s + "`"
	case tInt, tFloat:
		return "a number"
	case tString, tFString:
		return "a string"
	}
	return "`" + t.s + "`"
}

func (p *parser) fail(format string, args ...any) {
	panic(syntaxErr(p.line(), format, args...))
}

func (p *parser) expectOp(s string, hint string) {
	if !p.acceptOp(s) {
		msg := "expected `" + s + "`"
		if hint != "" {
			msg += " " + hint
		}
		p.fail("invalid syntax: %s, found %s", msg, describe(p.peek()))
	}
}

var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true, "await": true,
	"break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true, "else": true, "except": true,
	"finally": true, "for": true, "from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true, "return": true, "try": true,
	"while": true, "with": true, "yield": true,
}

func (p *parser) name(what string) string {
	t := p.peek()
	if t.kind != tName || keywords[t.s] {
		p.fail("invalid syntax: expected %s, found %s", what, describe(t))
	}
	p.next()
	return t.s
}

// stmt parses one statement line (several for `a; b`).
func (p *parser) stmt() []Stmt {
	t := p.peek()
	line := t.line
	if t.kind == tIndent {
		p.fail("unexpected indent: this line is indented more than the block it belongs to; align it with the line above")
	}
	if t.kind == tName {
		switch t.s {
		case "if":
			return []Stmt{p.ifStmt()}
		case "while":
			p.next()
			cond := p.namedTest()
			body := p.block("while")
			var els []Stmt
			if p.isKw("else") {
				p.next()
				els = p.block("else")
			}
			return []Stmt{&While{pos{line}, cond, body, els}}
		case "for":
			p.next()
			target := p.targetList()
			if !p.acceptKw("in") {
				p.fail("invalid syntax: expected `in` after the loop variable of `for`, found %s", describe(p.peek()))
			}
			iter := p.testListStar()
			body := p.block("for")
			var els []Stmt
			if p.isKw("else") {
				p.next()
				els = p.block("else")
			}
			return []Stmt{&For{pos{line}, target, iter, body, els}}
		case "try":
			return []Stmt{p.tryStmt()}
		case "def":
			return []Stmt{p.funcDef()}
		case "class":
			panic(refuse(line, "`class` definitions are not supported; use a dict such as {\"name\": ..., \"score\": ...} or a tuple, and functions"))
		case "with":
			panic(refuse(line, "`with` statements are not supported (there are no files or locks to manage); write the body without `with`"))
		case "async", "await":
			panic(refuse(line, "`%s` is not supported; retrieval calls are synchronous: call them directly", t.s))
		case "yield":
			panic(refuse(line, "`yield` (generator functions) is not supported; build and return a list instead"))
		case "match":
			if nt := p.peekN(1); nt.kind == tName || nt.kind == tOp && (nt.s == "(" || nt.s == "[") {
				if p.looksLikeMatch() {
					panic(refuse(line, "`match` statements are not supported; use if/elif/else"))
				}
			}
		case "elif", "else", "except", "finally":
			p.fail("invalid syntax: `%s` without a matching `%s` above it at the same indentation", t.s, map[string]string{"elif": "if", "else": "if/for/while/try", "except": "try", "finally": "try"}[t.s])
		}
	}
	if t.kind == tOp && t.s == "@" {
		panic(refuse(line, "decorators (`@...`) are not supported; call the wrapping function explicitly"))
	}
	var out []Stmt
	for {
		out = append(out, p.smallStmt())
		if !p.acceptOp(";") {
			break
		}
		if p.peek().kind == tNewline || p.peek().kind == tEOF {
			break
		}
	}
	switch p.peek().kind {
	case tNewline:
		p.next()
	case tEOF, tDedent:
	default:
		p.unexpected()
	}
	return out
}

// unexpected explains a token where a statement should end.
func (p *parser) unexpected() {
	t := p.peek()
	switch {
	case t.kind == tOp && t.s == "=":
		p.fail("invalid syntax: cannot assign here; the left of `=` must be a name, a subscript a[i], an attribute or a tuple of them (to compare, write `==`)")
	case t.kind == tName && t.s == "for":
		p.fail("invalid syntax at `for`: a comprehension needs brackets, e.g. [x for x in xs]")
	case t.kind == tName && t.s == "if":
		p.fail("invalid syntax at `if`: a conditional expression needs an else: `a if cond else b`")
	case t.kind == tString || t.kind == tFString || t.kind == tName || t.kind == tInt || t.kind == tFloat:
		p.fail("invalid syntax: %s follows an expression; is a comma or an operator missing?", describe(t))
	}
	p.fail("invalid syntax: unexpected %s", describe(t))
}

func (p *parser) looksLikeMatch() bool {
	// `match x:` followed by a newline: scan to the end of the line.
	depth := 0
	for j := p.i + 1; j < len(p.toks); j++ {
		t := p.toks[j]
		switch {
		case t.kind == tNewline || t.kind == tEOF:
			return false
		case t.kind == tOp && (t.s == "(" || t.s == "[" || t.s == "{"):
			depth++
		case t.kind == tOp && (t.s == ")" || t.s == "]" || t.s == "}"):
			depth--
		case t.kind == tOp && t.s == ":" && depth == 0:
			return j+1 < len(p.toks) && p.toks[j+1].kind == tNewline
		case t.kind == tOp && t.s == "=" && depth == 0:
			return false
		}
	}
	return false
}

func (p *parser) block(what string) []Stmt {
	if !p.acceptOp(":") {
		p.fail("invalid syntax: expected `:` at the end of the `%s` line, found %s", what, describe(p.peek()))
	}
	if p.peek().kind != tNewline {
		// a one-line block: `if x: y`
		return p.stmt()
	}
	p.next()
	if p.peek().kind != tIndent {
		p.fail("expected an indented block after the `%s` line; indent its body (4 spaces), or write `pass`", what)
	}
	p.next()
	var body []Stmt
	for p.peek().kind != tDedent && p.peek().kind != tEOF {
		if p.peek().kind == tNewline {
			p.next()
			continue
		}
		body = append(body, p.stmt()...)
	}
	if p.peek().kind == tDedent {
		p.next()
	}
	return body
}

func (p *parser) ifStmt() Stmt {
	line := p.next().line // if / elif
	cond := p.namedTest()
	body := p.block("if")
	s := &If{pos: pos{line}, Cond: cond, Body: body}
	if p.isKw("elif") {
		s.Else = []Stmt{p.ifStmt()}
	} else if p.isKw("else") {
		p.next()
		s.Else = p.block("else")
	}
	return s
}

func (p *parser) tryStmt() Stmt {
	line := p.next().line
	s := &Try{pos: pos{line}}
	s.Body = p.block("try")
	for p.isKw("except") {
		hl := p.next().line
		h := Handler{Line: hl}
		if p.isOp("*") {
			panic(refuse(hl, "`except*` (exception groups) is not supported; use `except`"))
		}
		if !p.isOp(":") {
			h.Type = p.test()
			if p.isOp(",") {
				p.fail("invalid syntax: several exception classes go in parentheses: `except (ValueError, KeyError) as e:`")
			}
			if p.acceptKw("as") {
				h.Name = p.name("a name after `as`")
			}
		}
		h.Body = p.block("except")
		s.Handlers = append(s.Handlers, h)
	}
	if p.isKw("else") {
		if len(s.Handlers) == 0 {
			p.fail("invalid syntax: `try`/`else` needs at least one `except` clause")
		}
		p.next()
		s.Else = p.block("else")
	}
	if p.isKw("finally") {
		p.next()
		s.Finally = p.block("finally")
	}
	if len(s.Handlers) == 0 && s.Finally == nil {
		p.fail("invalid syntax: `try` needs an `except` or `finally` clause, e.g. `except Exception as e:`")
	}
	return s
}

func (p *parser) funcDef() Stmt {
	line := p.next().line
	name := p.name("a function name after `def`")
	p.expectOp("(", "after the function name")
	params := p.params(")")
	p.expectOp(")", "to close the parameter list")
	if p.acceptOp("->") {
		p.test() // annotation, ignored
	}
	body := p.block("def")
	return &FuncDef{pos: pos{line}, Name: name, Params: params, Body: body}
}

// params parses a parameter list up to end (")" or ":" for lambda).
func (p *parser) params(end string) []Param {
	var ps []Param
	seen := map[string]bool{}
	kwonly := false
	for !p.isOp(end) {
		var prm Param
		switch {
		case p.acceptOp("**"):
			prm.Kind = "**"
			prm.Name = p.name("a parameter name after `**`")
		case p.acceptOp("*"):
			if p.isOp(",") {
				kwonly = true
				p.next()
				continue
			}
			prm.Kind = "*"
			prm.Name = p.name("a parameter name after `*`")
			kwonly = true
		case p.acceptOp("/"):
			if !p.acceptOp(",") && !p.isOp(end) {
				p.fail("invalid syntax in the parameter list after `/`")
			}
			continue
		default:
			prm.Name = p.name("a parameter name")
			if kwonly {
				prm.Kind = "kwonly"
			}
		}
		if seen[prm.Name] {
			p.fail("duplicate parameter %q in the function definition", prm.Name)
		}
		seen[prm.Name] = true
		if end == ")" && p.acceptOp(":") {
			p.test() // annotation
		}
		if p.acceptOp("=") {
			if prm.Kind == "*" || prm.Kind == "**" {
				p.fail("invalid syntax: a `%s%s` parameter cannot have a default", prm.Kind, prm.Name)
			}
			prm.Default = p.test()
		} else if prm.Kind == "" {
			for _, q := range ps {
				if q.Kind == "" && q.Default != nil {
					p.fail("invalid syntax: parameter %q without a default follows a parameter with a default", prm.Name)
				}
			}
		}
		if prm.Kind == "**" && !p.isOp(end) && !(p.isOp(",") && p.peekN(1).kind == tOp && p.peekN(1).s == end) {
			p.fail("invalid syntax: `**%s` must be the last parameter", prm.Name)
		}
		ps = append(ps, prm)
		if !p.acceptOp(",") {
			break
		}
	}
	return ps
}

var allowedModules = []string{"math", "re", "collections", "itertools", "functools", "heapq", "statistics", "json", "string"}

func moduleAllowed(m string) bool {
	for _, a := range allowedModules {
		if a == m {
			return true
		}
	}
	return false
}

func refuseModule(line int, m string) *Error {
	hint := ""
	switch m {
	case "os", "sys", "subprocess", "pathlib", "io", "shutil", "socket", "requests", "urllib", "http":
		hint = " (programs cannot reach files, the network or the process)"
	case "random":
		hint = " (programs must be deterministic)"
	case "typing", "dataclasses", "__future__":
		hint = " (type annotations need no import; drop it)"
	case "numpy", "pandas":
		hint = " (use lists, sorted() and sum())"
	}
	return refuse(line, "module %q is not available%s; the allowed modules are %s", m, hint, strings.Join(allowedModules, ", "))
}

func (p *parser) dotted() string {
	n := p.name("a module name")
	for p.acceptOp(".") {
		n += "." + p.name("a module name")
	}
	return n
}

func (p *parser) smallStmt() Stmt {
	t := p.peek()
	line := t.line
	if t.kind == tName {
		switch t.s {
		case "pass":
			p.next()
			return &Pass{pos{line}}
		case "break":
			p.next()
			return &Break{pos{line}}
		case "continue":
			p.next()
			return &Continue{pos{line}}
		case "return":
			p.next()
			var x Expr
			if !p.atStmtEnd() {
				x = p.testListStar()
			}
			return &Return{pos{line}, x}
		case "global", "nonlocal":
			p.next()
			names := []string{p.name("a name")}
			for p.acceptOp(",") {
				names = append(names, p.name("a name"))
			}
			if t.s == "global" {
				return &Global{pos{line}, names}
			}
			return &Nonlocal{pos{line}, names}
		case "del":
			p.next()
			var ts []Expr
			for {
				ts = append(ts, p.expr())
				if !p.acceptOp(",") || p.atStmtEnd() {
					break
				}
			}
			for _, x := range ts {
				p.checkTarget(x, "del")
			}
			return &Del{pos{line}, ts}
		case "assert":
			p.next()
			s := &Assert{pos: pos{line}, Cond: p.test()}
			if p.acceptOp(",") {
				s.Msg = p.test()
			}
			return s
		case "raise":
			p.next()
			s := &Raise{pos: pos{line}}
			if !p.atStmtEnd() {
				s.X = p.test()
				if p.acceptKw("from") {
					s.Cause = p.test()
				}
			}
			return s
		case "import":
			p.next()
			m := p.dotted()
			if !moduleAllowed(m) {
				panic(refuseModule(line, m))
			}
			s := &Import{pos: pos{line}, Module: m, As: m}
			if p.acceptKw("as") {
				s.As = p.name("a name after `as`")
			}
			if p.isOp(",") {
				p.fail("invalid syntax: import one module per line (`import math` then `import re`)")
			}
			return s
		case "from":
			p.next()
			if p.isOp(".") {
				panic(refuse(line, "relative imports are not supported; the allowed modules are %s", strings.Join(allowedModules, ", ")))
			}
			m := p.dotted()
			if !moduleAllowed(m) {
				panic(refuseModule(line, m))
			}
			if !p.acceptKw("import") {
				p.fail("invalid syntax: expected `import` after `from %s`", m)
			}
			if p.isOp("*") {
				panic(refuse(line, "`from %s import *` is not supported; name what you use: `from %s import name`", m, m))
			}
			paren := p.acceptOp("(")
			s := &Import{pos: pos{line}, Module: m}
			for {
				n := p.name("a name to import")
				as := n
				if p.acceptKw("as") {
					as = p.name("a name after `as`")
				}
				s.Names = append(s.Names, [2]string{n, as})
				if !p.acceptOp(",") {
					break
				}
				if paren && p.isOp(")") {
					break
				}
			}
			if paren {
				p.expectOp(")", "to close the import list")
			}
			return s
		}
	}
	// expression statement or assignment
	x := p.testListStar()
	if p.isOp(":") {
		// annotated assignment: x: int = v
		p.next()
		p.checkTarget(x, "=")
		p.test()
		if p.acceptOp("=") {
			return &Assign{pos{line}, []Expr{x}, p.testListStar()}
		}
		return &Pass{pos{line}}
	}
	if t := p.peek(); t.kind == tOp && len(t.s) >= 2 && strings.HasSuffix(t.s, "=") && t.s != "==" && t.s != "<=" && t.s != ">=" && t.s != "!=" {
		op := strings.TrimSuffix(t.s, "=")
		p.next()
		switch x.(type) {
		case *Name, *Attr, *Subscript:
		default:
			panic(syntaxErr(line, "invalid syntax: `%s=` needs a name, a subscript or an attribute on its left", op))
		}
		if op == "@" {
			panic(refuse(line, "the matrix operator `@=` is not supported"))
		}
		return &AugAssign{pos{line}, op, x, p.testListStar()}
	}
	if p.isOp("=") {
		targets := []Expr{x}
		var v Expr
		for p.acceptOp("=") {
			v = p.testListStar()
			targets = append(targets, v)
		}
		targets = targets[:len(targets)-1]
		for _, tg := range targets {
			p.checkTarget(tg, "=")
		}
		return &Assign{pos{line}, targets, v}
	}
	return &ExprStmt{pos{line}, x}
}

func (p *parser) atStmtEnd() bool {
	t := p.peek()
	return t.kind == tNewline || t.kind == tEOF || t.kind == tDedent || t.kind == tOp && t.s == ";"
}

// checkTarget rejects what cannot be assigned to, with a fix.
func (p *parser) checkTarget(x Expr, what string) {
	switch x := x.(type) {
	case *Name, *Attr, *Subscript:
		return
	case *TupleExpr:
		stars := 0
		for _, e := range x.Elts {
			if s, ok := e.(*Starred); ok {
				stars++
				if what == "del" {
					break
				}
				p.checkTarget(s.X, what)
				continue
			}
			p.checkTarget(e, what)
		}
		if stars > 1 {
			panic(syntaxErr(x.Line, "multiple starred expressions in an assignment; keep one *rest"))
		}
		return
	case *ListExpr:
		for _, e := range x.Elts {
			if s, ok := e.(*Starred); ok {
				p.checkTarget(s.X, what)
				continue
			}
			p.checkTarget(e, what)
		}
		return
	case *Call:
		panic(syntaxErr(x.Line, "cannot assign to a function call; to compare, write `==`"))
	case *Compare:
		panic(syntaxErr(x.Line, "cannot assign to a comparison; to compare, write `==`"))
	}
	if what == "del" {
		panic(syntaxErr(x.exprLine(), "cannot delete this expression; `del` takes names, x[i] or x.attr"))
	}
	panic(syntaxErr(x.exprLine(), "cannot assign to this expression; the left of `=` must be a name, x[i], x.attr or a tuple of them (to compare, write `==`)"))
}

// targetList parses a for-loop target: a, b or (a, b).
func (p *parser) targetList() Expr {
	line := p.line()
	x := p.starOrExpr()
	if !p.isOp(",") {
		p.checkTarget(x, "=")
		return x
	}
	elts := []Expr{x}
	for p.acceptOp(",") {
		if p.isKw("in") {
			break
		}
		elts = append(elts, p.starOrExpr())
	}
	t := &TupleExpr{pos{line}, elts}
	p.checkTarget(t, "=")
	return t
}

func (p *parser) starOrExpr() Expr {
	if p.isOp("*") {
		line := p.next().line
		return &Starred{pos{line}, p.expr()}
	}
	return p.expr()
}

// testListStar parses a comma list of tests or starred expressions; one
// without a comma is the expression itself, else a tuple.
func (p *parser) testListStar() Expr {
	line := p.line()
	x := p.starOrTest()
	if !p.isOp(",") {
		return x
	}
	elts := []Expr{x}
	for p.acceptOp(",") {
		if p.atStmtEnd() || p.isOp("=") || p.isOp(")") || p.isOp(":") {
			break
		}
		elts = append(elts, p.starOrTest())
	}
	return &TupleExpr{pos{line}, elts}
}

func (p *parser) starOrTest() Expr {
	if p.isOp("*") {
		line := p.next().line
		return &Starred{pos{line}, p.expr()}
	}
	return p.namedTest()
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxExprDepth {
		p.fail("expression nested more than %d deep; split it with intermediate variables", maxExprDepth)
	}
}

// namedTest: NAME := test | test.
func (p *parser) namedTest() Expr {
	if t := p.peek(); t.kind == tName && p.peekN(1).kind == tOp && p.peekN(1).s == ":=" {
		if keywords[t.s] {
			p.fail("cannot assign to the keyword %q with :=", t.s)
		}
		p.next()
		p.next()
		return &NamedExpr{pos{t.line}, t.s, p.test()}
	}
	x := p.test()
	if p.isOp(":=") {
		p.fail("invalid syntax: the left of `:=` must be a plain name")
	}
	return x
}

func (p *parser) test() Expr {
	p.enter()
	defer func() { p.depth-- }()
	if p.isKw("lambda") {
		return p.lambda(false)
	}
	line := p.line()
	x := p.orTest()
	if p.isKw("if") {
		// only when an else follows: inside a comprehension `if` is a filter
		save := p.i
		p.next()
		cond := p.orTest()
		if !p.acceptKw("else") {
			p.i = save
			return x
		}
		els := p.test()
		return &IfExp{pos{line}, cond, x, els}
	}
	return x
}

// testNoCond parses a test without a conditional expression (comprehension
// filters and iterables).
func (p *parser) testNoCond() Expr {
	if p.isKw("lambda") {
		return p.lambda(true)
	}
	return p.orTest()
}

func (p *parser) lambda(noCond bool) Expr {
	line := p.next().line
	params := p.params(":")
	p.expectOp(":", "after the lambda parameters")
	var body Expr
	if noCond {
		body = p.testNoCond()
	} else {
		body = p.test()
	}
	fn := &FuncDef{pos: pos{line}, Name: "<lambda>", Params: params, Body: []Stmt{&Return{pos{line}, body}}, IsLambda: true}
	return &Lambda{pos{line}, fn}
}

func (p *parser) orTest() Expr {
	x := p.andTest()
	for p.isKw("or") {
		line := p.next().line
		x = &BoolOp{pos{line}, "or", x, p.andTest()}
	}
	return x
}

func (p *parser) andTest() Expr {
	x := p.notTest()
	for p.isKw("and") {
		line := p.next().line
		x = &BoolOp{pos{line}, "and", x, p.notTest()}
	}
	return x
}

func (p *parser) notTest() Expr {
	if p.isKw("not") {
		p.enter()
		defer func() { p.depth-- }()
		line := p.next().line
		return &UnaryOp{pos{line}, "not", p.notTest()}
	}
	return p.comparison()
}

func (p *parser) compOp() string {
	t := p.peek()
	if t.kind == tOp {
		switch t.s {
		case "<", ">", "==", ">=", "<=", "!=":
			p.next()
			return t.s
		case "<>":
			p.fail("invalid syntax `<>`; write `!=`")
		}
	}
	if t.kind == tName {
		switch t.s {
		case "in":
			p.next()
			return "in"
		case "not":
			if n := p.peekN(1); n.kind == tName && n.s == "in" {
				p.next()
				p.next()
				return "not in"
			}
		case "is":
			p.next()
			if p.acceptKw("not") {
				return "is not"
			}
			return "is"
		}
	}
	return ""
}

func (p *parser) comparison() Expr {
	line := p.line()
	x := p.expr()
	var ops []string
	var rest []Expr
	for {
		op := p.compOp()
		if op == "" {
			break
		}
		ops = append(ops, op)
		rest = append(rest, p.expr())
	}
	if ops == nil {
		return x
	}
	return &Compare{pos{line}, x, ops, rest}
}

// binary operator levels, lowest first.
var binLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}}

func (p *parser) expr() Expr { return p.binary(0) }

func (p *parser) binary(level int) Expr {
	if level == len(binLevels) {
		return p.factor()
	}
	x := p.binary(level + 1)
	for {
		t := p.peek()
		if t.kind != tOp {
			return x
		}
		found := false
		for _, o := range binLevels[level] {
			if t.s == o {
				found = true
			}
		}
		if !found {
			return x
		}
		if t.s == "@" {
			panic(refuse(t.line, "the matrix operator `@` is not supported"))
		}
		p.next()
		x = &BinOp{pos{t.line}, t.s, x, p.binary(level + 1)}
	}
}

func (p *parser) factor() Expr {
	t := p.peek()
	if t.kind == tOp && (t.s == "-" || t.s == "+" || t.s == "~") {
		p.enter()
		defer func() { p.depth-- }()
		p.next()
		return &UnaryOp{pos{t.line}, t.s, p.factor()}
	}
	return p.power()
}

func (p *parser) power() Expr {
	if p.isKw("await") {
		panic(refuse(p.line(), "`await` is not supported; retrieval calls are synchronous: call them directly"))
	}
	x := p.atomExpr()
	if p.isOp("**") {
		line := p.next().line
		return &BinOp{pos{line}, "**", x, p.factor()}
	}
	return x
}

func (p *parser) atomExpr() Expr {
	x := p.atom()
	for {
		t := p.peek()
		if t.kind != tOp {
			return x
		}
		switch t.s {
		case "(":
			p.next()
			x = &Call{pos{t.line}, x, p.callArgs()}
		case "[":
			p.next()
			idx := p.subscript()
			p.expectOp("]", "to close the subscript")
			x = &Subscript{pos{t.line}, x, idx}
		case ".":
			p.next()
			nt := p.peek()
			if nt.kind != tName {
				p.fail("invalid syntax: expected an attribute name after `.`, found %s", describe(nt))
			}
			p.next()
			if strings.HasPrefix(nt.s, "__") && strings.HasSuffix(nt.s, "__") && nt.s != "__name__" {
				panic(refuse(nt.line, "dunder attribute access (`.%s`) is not supported; use the builtins: len(x), str(x), isinstance(x, str), type(x).__name__", nt.s))
			}
			x = &Attr{pos{t.line}, x, nt.s}
		default:
			return x
		}
	}
}

func (p *parser) callArgs() []Arg {
	var args []Arg
	sawKw := false
	for !p.isOp(")") {
		line := p.line()
		var a Arg
		switch {
		case p.acceptOp("**"):
			a.DStar = true
			a.Value = p.test()
			sawKw = true
		case p.acceptOp("*"):
			a.Star = true
			a.Value = p.test()
		default:
			if t := p.peek(); t.kind == tName && p.peekN(1).kind == tOp && p.peekN(1).s == "=" {
				if keywords[t.s] {
					p.fail("invalid syntax: %q is a keyword, not an argument name", t.s)
				}
				p.next()
				p.next()
				a.Name = t.s
				a.Value = p.test()
				sawKw = true
			} else {
				a.Value = p.namedTest()
				if p.isKw("for") {
					// a generator expression as the argument
					g := p.compTail("gen", a.Value, nil, line)
					if len(args) > 0 || !p.isOp(")") {
						p.fail("invalid syntax: a generator expression must be parenthesized when it is not the only argument: f((x for x in xs), y)")
					}
					a.Value = g
				} else if sawKw {
					p.fail("invalid syntax: a positional argument follows a keyword argument; put positional arguments first")
				}
			}
		}
		args = append(args, a)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")", "to close the call's arguments")
	return args
}

func (p *parser) subscript() Expr {
	line := p.line()
	first := p.sliceItem()
	if !p.isOp(",") {
		return first
	}
	elts := []Expr{first}
	for p.acceptOp(",") {
		if p.isOp("]") {
			break
		}
		elts = append(elts, p.sliceItem())
	}
	return &TupleExpr{pos{line}, elts}
}

func (p *parser) sliceItem() Expr {
	line := p.line()
	var lo, hi, step Expr
	if !p.isOp(":") {
		lo = p.namedTest()
		if !p.isOp(":") {
			return lo
		}
	}
	p.next() // ':'
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		hi = p.test()
	}
	if p.acceptOp(":") {
		if !p.isOp("]") && !p.isOp(",") {
			step = p.test()
		}
	}
	return &SliceExpr{pos{line}, lo, hi, step}
}

func (p *parser) atom() Expr {
	t := p.peek()
	line := t.line
	switch t.kind {
	case tInt:
		p.next()
		return &IntLit{pos{line}, t.i, t.big}
	case tFloat:
		p.next()
		return &FloatLit{pos{line}, t.f}
	case tString, tFString:
		return p.strings()
	case tName:
		switch t.s {
		case "None":
			p.next()
			return &NoneLit{pos{line}}
		case "True", "False":
			p.next()
			return &BoolLit{pos{line}, t.s == "True"}
		case "yield":
			panic(refuse(line, "`yield` (generator functions) is not supported; build and return a list instead"))
		case "lambda":
			return p.lambda(false)
		}
		if keywords[t.s] {
			p.fail("invalid syntax: unexpected keyword `%s` where a value was expected", t.s)
		}
		p.next()
		return &Name{pos{line}, t.s}
	case tOp:
		switch t.s {
		case "(":
			p.next()
			p.enter()
			defer func() { p.depth-- }()
			if p.acceptOp(")") {
				return &TupleExpr{pos{line}, nil}
			}
			if p.isKw("yield") {
				panic(refuse(line, "`yield` (generator functions) is not supported; build and return a list instead"))
			}
			first := p.starOrTest()
			if p.isKw("for") {
				g := p.compTail("gen", first, nil, line)
				p.expectOp(")", "to close the generator expression")
				return g
			}
			if p.acceptOp(")") {
				if _, ok := first.(*Starred); ok {
					p.fail("invalid syntax: a starred expression `*x` cannot stand alone in parentheses; write (*x,) for a tuple")
				}
				return first
			}
			elts := []Expr{first}
			for p.acceptOp(",") {
				if p.isOp(")") {
					break
				}
				elts = append(elts, p.starOrTest())
			}
			p.expectOp(")", "to close the parenthesis")
			return &TupleExpr{pos{line}, elts}
		case "[":
			p.next()
			p.enter()
			defer func() { p.depth-- }()
			if p.acceptOp("]") {
				return &ListExpr{pos{line}, nil}
			}
			first := p.starOrTest()
			if p.isKw("for") {
				c := p.compTail("list", first, nil, line)
				p.expectOp("]", "to close the list comprehension")
				return c
			}
			elts := []Expr{first}
			for p.acceptOp(",") {
				if p.isOp("]") {
					break
				}
				elts = append(elts, p.starOrTest())
			}
			p.expectOp("]", "to close the list (is a comma missing between items?)")
			return &ListExpr{pos{line}, elts}
		case "{":
			p.next()
			p.enter()
			defer func() { p.depth-- }()
			return p.dictOrSet(line)
		case "...":
			p.next()
			return &EllipsisLit{pos{line}}
		case "*":
			p.fail("invalid syntax: a starred expression `*x` is allowed only in calls f(*x), literals [*a, *b] and assignment targets")
		}
	}
	p.fail("invalid syntax: expected a value, found %s", describe(t))
	return nil
}

func (p *parser) dictOrSet(line int) Expr {
	if p.acceptOp("}") {
		return &DictExpr{pos: pos{line}}
	}
	if p.acceptOp("**") {
		d := &DictExpr{pos: pos{line}}
		d.Keys = append(d.Keys, nil)
		d.Values = append(d.Values, p.expr())
		return p.dictRest(d)
	}
	first := p.starOrTest()
	if p.acceptOp(":") {
		if _, ok := first.(*Starred); ok {
			p.fail("invalid syntax: `*x` cannot be a dict key; use **d to merge a dict")
		}
		v := p.test()
		if p.isKw("for") {
			c := p.compTail("dict", first, v, line)
			p.expectOp("}", "to close the dict comprehension")
			return c
		}
		d := &DictExpr{pos: pos{line}, Keys: []Expr{first}, Values: []Expr{v}}
		return p.dictRest(d)
	}
	if p.isKw("for") {
		c := p.compTail("set", first, nil, line)
		p.expectOp("}", "to close the set comprehension")
		return c
	}
	elts := []Expr{first}
	for p.acceptOp(",") {
		if p.isOp("}") {
			break
		}
		elts = append(elts, p.starOrTest())
	}
	p.expectOp("}", "to close the set (a dict needs key: value)")
	return &SetExpr{pos{line}, elts}
}

func (p *parser) dictRest(d *DictExpr) Expr {
	for p.acceptOp(",") {
		if p.isOp("}") {
			break
		}
		if p.acceptOp("**") {
			d.Keys = append(d.Keys, nil)
			d.Values = append(d.Values, p.expr())
			continue
		}
		k := p.test()
		p.expectOp(":", "between a dict key and its value")
		d.Keys = append(d.Keys, k)
		d.Values = append(d.Values, p.test())
	}
	p.expectOp("}", "to close the dict (is a comma missing between entries?)")
	return d
}

func (p *parser) compTail(kind string, elt, val Expr, line int) Expr {
	if _, ok := elt.(*Starred); ok {
		p.fail("invalid syntax: a comprehension element cannot be starred")
	}
	c := &Comp{pos: pos{line}, Kind: kind, Elt: elt, Val: val}
	for p.isKw("for") {
		p.next()
		target := p.targetList()
		if !p.acceptKw("in") {
			p.fail("invalid syntax: expected `in` in the comprehension's `for`, found %s", describe(p.peek()))
		}
		cl := CompClause{Target: target, Iter: p.orTest()}
		for p.isKw("if") {
			p.next()
			cl.Ifs = append(cl.Ifs, p.testNoCond())
		}
		c.Clauses = append(c.Clauses, cl)
	}
	if p.isKw("async") {
		panic(refuse(p.line(), "`async for` is not supported"))
	}
	return c
}

// strings parses adjacent string literals (implicit concatenation);
// any f-string among them makes the whole an FString.
func (p *parser) strings() Expr {
	line := p.line()
	var parts []FPart
	isF := false
	for {
		t := p.peek()
		if t.kind == tString {
			parts = appendLit(parts, t.s)
		} else if t.kind == tFString {
			isF = true
			fp, err := parseFString(t.s, t.raw, t.line)
			if err != nil {
				panic(err)
			}
			for _, x := range fp {
				if x.Expr == nil {
					parts = appendLit(parts, x.Lit)
				} else {
					parts = append(parts, x)
				}
			}
		} else {
			break
		}
		p.next()
	}
	if !isF {
		s := ""
		if len(parts) > 0 {
			s = parts[0].Lit
		}
		return &StrLit{pos{line}, s}
	}
	return &FString{pos{line}, parts}
}

func appendLit(parts []FPart, s string) []FPart {
	if n := len(parts); n > 0 && parts[n-1].Expr == nil {
		parts[n-1].Lit += s
		return parts
	}
	return append(parts, FPart{Lit: s})
}

// parseFString splits an f-string body into literal pieces and fields.
func parseFString(body string, raw bool, line int) ([]FPart, *Error) {
	return parseFParts(body, raw, line, 0)
}

func parseFParts(body string, raw bool, line, nest int) ([]FPart, *Error) {
	if nest > 2 {
		return nil, syntaxErr(line, "f-string: format specs nested too deeply")
	}
	var parts []FPart
	var lit strings.Builder
	flush := func() *Error {
		if lit.Len() == 0 {
			return nil
		}
		s := lit.String()
		lit.Reset()
		if !raw {
			d, err := unescape(s, line)
			if err != nil {
				return err
			}
			s = d
		}
		parts = appendLit(parts, s)
		return nil
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch c {
		case '\\':
			lit.WriteByte(c)
			if i+1 < len(body) {
				i++
				lit.WriteByte(body[i])
			}
		case '}':
			if i+1 < len(body) && body[i+1] == '}' && nest == 0 {
				lit.WriteByte('}')
				i++
				continue
			}
			return nil, syntaxErr(line, "f-string: single `}` is not allowed; write `}}` for a literal brace")
		case '{':
			if i+1 < len(body) && body[i+1] == '{' && nest == 0 {
				lit.WriteByte('{')
				i++
				continue
			}
			if err := flush(); err != nil {
				return nil, err
			}
			f, n, err := parseField(body[i+1:], raw, line, nest)
			if err != nil {
				return nil, err
			}
			parts = append(parts, f)
			i += n // at the closing brace
		default:
			lit.WriteByte(c)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return parts, nil
}

// parseField parses a replacement field after its '{'; n is the offset of
// the closing '}' relative to the '{'.
func parseField(s string, raw bool, line, nest int) (FPart, int, *Error) {
	depth := 0
	var quote byte
	end := -1
	i := 0
loop:
	for ; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				if c == '}' {
					end = i
					break loop
				}
				return FPart{}, 0, syntaxErr(line, "f-string: unmatched %q in a field", c)
			}
			depth--
		case '!':
			if depth == 0 && (i+1 >= len(s) || s[i+1] != '=') {
				end = i
				break loop
			}
		case ':':
			if depth == 0 {
				end = i
				break loop
			}
		case '\\':
			return FPart{}, 0, syntaxErr(line, "f-string: a backslash cannot appear inside the {expression} part; compute the value in a variable first")
		case '#':
			return FPart{}, 0, syntaxErr(line, "f-string: `#` cannot appear inside the {expression} part")
		}
	}
	if end < 0 {
		return FPart{}, 0, syntaxErr(line, "f-string: expecting `}`; a field opened with `{` is never closed (write `{{` for a literal brace)")
	}
	text := s[:end]
	f := FPart{}
	debug := false
	if t := strings.TrimRight(text, " "); strings.HasSuffix(t, "=") && !strings.HasSuffix(t, "==") && !strings.HasSuffix(t, "!=") && !strings.HasSuffix(t, "<=") && !strings.HasSuffix(t, ">=") {
		debug = true
		f.Text = text
		text = strings.TrimSuffix(t, "=")
	}
	if strings.TrimSpace(text) == "" {
		return FPart{}, 0, syntaxErr(line, "f-string: empty expression `{}`; put a value inside the braces, or write `{{}}` for literal braces")
	}
	x, err := parseExprText(text, line)
	if err != nil {
		return FPart{}, 0, err
	}
	f.Expr = x
	i = end
	if s[i] == '!' {
		if i+1 >= len(s) || strings.IndexByte("rsa", s[i+1]) < 0 {
			return FPart{}, 0, syntaxErr(line, "f-string: invalid conversion after `!`; use !r, !s or !a")
		}
		f.Conv = s[i+1]
		i += 2
		if i >= len(s) || s[i] != '}' && s[i] != ':' {
			return FPart{}, 0, syntaxErr(line, "f-string: expecting `}` after the !%c conversion", f.Conv)
		}
	} else if debug {
		f.Conv = 'r'
	}
	if s[i] == ':' {
		// spec up to the matching '}', nested fields allowed
		j := matchingBrace(s, i)
		if j >= len(s) {
			return FPart{}, 0, syntaxErr(line, "f-string: expecting `}` after the format spec")
		}
		spec, err := parseFParts(s[i+1:j], raw, line, nest+1)
		if err != nil {
			return FPart{}, 0, err
		}
		f.Spec = spec
		if debug && f.Conv == 'r' && !strings.Contains(f.Text, "!") {
			f.Conv = 0 // f"{x=:.2f}" formats with the spec, like CPython
		}
		i = j
	}
	if s[i] != '}' {
		return FPart{}, 0, syntaxErr(line, "f-string: expecting `}`")
	}
	return f, i + 1, nil
}

// parseExprText parses the expression of an f-string field.
func parseExprText(text string, line int) (x Expr, err *Error) {
	toks, serr := scan("(" + text + "\n)")
	if serr != nil {
		e := serr.(*Error)
		return nil, syntaxErr(line, "f-string expression: %s", e.Msg)
	}
	for i := range toks {
		toks[i].line += line - 1
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			x, err = nil, e
		}
	}()
	x = p.testListStar()
	if p.peek().kind != tNewline && p.peek().kind != tEOF {
		p.fail("f-string: invalid expression inside {...}")
	}
	return x, nil
}

// matchingBrace is the index of the '}' that closes the '{' (or ':') at
// s[i], skipping nested {...} pairs, or len(s) when none does.
func matchingBrace(s string, i int) int {
	d := 0
	j := i + 1
	for ; j < len(s); j++ {
		if s[j] == '{' {
			d++
		} else if s[j] == '}' {
			if d == 0 {
				break
			}
			d--
		}
	}
	return j
}
