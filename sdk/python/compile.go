package python

import (
	"math/big"
	"strings"
)

// The compiler turns the AST into Go closures: an expression becomes an
// exprFn, a statement a stmtFn. Names are resolved at compile time to a
// local, an enclosing function's variable (a frame depth) or a global.

type exprFn func(fr *frame) Value
type stmtFn func(fr *frame) ctl

type ctl uint8

const (
	ctlNone ctl = iota
	ctlBreak
	ctlContinue
	ctlReturn
)

type frame struct {
	t      *Thread
	vars   map[string]Value
	parent *frame
	ret    Value
	exc    *Exception // the exception being handled (bare raise)
}

type scopeKind uint8

const (
	scModule scopeKind = iota
	scFunc
	scComp
)

type scope struct {
	kind      scopeKind
	locals    map[string]bool
	globals   map[string]bool
	nonlocals map[string]bool
	parent    *scope
}

type compiler struct{}

func (c *compiler) protect(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	f()
	return nil
}

func newModuleScope(body []Stmt) *scope {
	return &scope{kind: scModule, locals: map[string]bool{}, globals: map[string]bool{}, nonlocals: map[string]bool{}}
}

// collect gathers the names a function body binds (not descending into
// nested functions; walrus targets in comprehensions count).
func collectStmts(body []Stmt, s *scope) {
	for _, st := range body {
		collectStmt(st, s)
	}
}

func collectTarget(x Expr, s *scope) {
	switch x := x.(type) {
	case *Name:
		s.locals[x.ID] = true
	case *TupleExpr:
		for _, e := range x.Elts {
			collectTarget(e, s)
		}
	case *ListExpr:
		for _, e := range x.Elts {
			collectTarget(e, s)
		}
	case *Starred:
		collectTarget(x.X, s)
	}
	collectExpr(x, s)
}

// collectExpr finds walrus targets.
func collectExpr(x Expr, s *scope) {
	walkExpr(x, func(e Expr) bool {
		switch e := e.(type) {
		case *NamedExpr:
			s.locals[e.Name] = true
		case *Lambda:
			return false
		}
		return true
	})
}

func collectStmt(st Stmt, s *scope) {
	switch st := st.(type) {
	case *ExprStmt:
		collectExpr(st.X, s)
	case *Assign:
		for _, t := range st.Targets {
			collectTarget(t, s)
		}
		collectExpr(st.Value, s)
	case *AugAssign:
		collectTarget(st.Target, s)
		collectExpr(st.Value, s)
	case *If:
		collectExpr(st.Cond, s)
		collectStmts(st.Body, s)
		collectStmts(st.Else, s)
	case *While:
		collectExpr(st.Cond, s)
		collectStmts(st.Body, s)
		collectStmts(st.Else, s)
	case *For:
		collectTarget(st.Target, s)
		collectExpr(st.Iter, s)
		collectStmts(st.Body, s)
		collectStmts(st.Else, s)
	case *Try:
		collectStmts(st.Body, s)
		for _, h := range st.Handlers {
			if h.Name != "" {
				s.locals[h.Name] = true
			}
			collectStmts(h.Body, s)
		}
		collectStmts(st.Else, s)
		collectStmts(st.Finally, s)
	case *FuncDef:
		s.locals[st.Name] = true
	case *Import:
		if st.Names == nil {
			s.locals[strings.SplitN(st.As, ".", 2)[0]] = true
		}
		for _, n := range st.Names {
			s.locals[n[1]] = true
		}
	case *Del:
		for _, t := range st.Targets {
			collectTarget(t, s)
		}
	case *Global:
		for _, n := range st.Names {
			s.globals[n] = true
		}
	case *Nonlocal:
		for _, n := range st.Names {
			s.nonlocals[n] = true
		}
	case *Return:
		if st.X != nil {
			collectExpr(st.X, s)
		}
	}
}

// walkExpr visits x and its sub-expressions while f returns true.
func walkExpr(x Expr, f func(Expr) bool) {
	if x == nil || !f(x) {
		return
	}
	switch x := x.(type) {
	case *FString:
		for _, p := range x.Parts {
			walkExpr(p.Expr, f)
			for _, q := range p.Spec {
				walkExpr(q.Expr, f)
			}
		}
	case *BinOp:
		walkExpr(x.X, f)
		walkExpr(x.Y, f)
	case *UnaryOp:
		walkExpr(x.X, f)
	case *BoolOp:
		walkExpr(x.X, f)
		walkExpr(x.Y, f)
	case *Compare:
		walkExpr(x.First, f)
		for _, r := range x.Rest {
			walkExpr(r, f)
		}
	case *Call:
		walkExpr(x.Fn, f)
		for _, a := range x.Args {
			walkExpr(a.Value, f)
		}
	case *Attr:
		walkExpr(x.X, f)
	case *Subscript:
		walkExpr(x.X, f)
		walkExpr(x.Index, f)
	case *SliceExpr:
		walkExpr(x.Lo, f)
		walkExpr(x.Hi, f)
		walkExpr(x.Step, f)
	case *ListExpr:
		for _, e := range x.Elts {
			walkExpr(e, f)
		}
	case *TupleExpr:
		for _, e := range x.Elts {
			walkExpr(e, f)
		}
	case *SetExpr:
		for _, e := range x.Elts {
			walkExpr(e, f)
		}
	case *DictExpr:
		for i := range x.Values {
			walkExpr(x.Keys[i], f)
			walkExpr(x.Values[i], f)
		}
	case *Comp:
		walkExpr(x.Elt, f)
		walkExpr(x.Val, f)
		for _, cl := range x.Clauses {
			walkExpr(cl.Target, f)
			walkExpr(cl.Iter, f)
			for _, e := range cl.Ifs {
				walkExpr(e, f)
			}
		}
	case *IfExp:
		walkExpr(x.Cond, f)
		walkExpr(x.Then, f)
		walkExpr(x.Else, f)
	case *Starred:
		walkExpr(x.X, f)
	case *NamedExpr:
		walkExpr(x.X, f)
	}
}

// resolution of a name
type ref struct {
	kind  uint8 // 0 global, 1 local, 2 outer
	depth int
}

func (s *scope) resolve(name string) ref {
	if s.kind == scModule || s.globals[name] {
		return ref{}
	}
	if s.locals[name] && !s.nonlocals[name] {
		return ref{kind: 1}
	}
	d := 0
	for p := s; p != nil; p = p.parent {
		if p != s {
			if p.kind == scModule {
				return ref{}
			}
			if p.globals[name] {
				return ref{}
			}
			if p.locals[name] && !p.nonlocals[name] {
				return ref{kind: 2, depth: d}
			}
		}
		d++
	}
	return ref{}
}

func (c *compiler) stmts(s *scope, body []Stmt) []stmtFn {
	out := make([]stmtFn, 0, len(body))
	for _, st := range body {
		out = append(out, c.stmt(s, st))
	}
	return out
}

func execBlock(fr *frame, body []stmtFn) ctl {
	for _, f := range body {
		if c := f(fr); c != ctlNone {
			return c
		}
	}
	return ctlNone
}

func (c *compiler) stmt(s *scope, st Stmt) stmtFn {
	line := st.stmtLine()
	switch st := st.(type) {
	case *ExprStmt:
		x := c.expr(s, st.X)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			x(fr)
			return ctlNone
		}
	case *Pass:
		return func(fr *frame) ctl { return ctlNone }
	case *Break:
		return func(fr *frame) ctl { return ctlBreak }
	case *Continue:
		return func(fr *frame) ctl { return ctlContinue }
	case *Return:
		if s.kind == scModule {
			panic(syntaxErr(line, "`return` outside a function; at the top level, print the result instead"))
		}
		if st.X == nil {
			return func(fr *frame) ctl { fr.ret = None; return ctlReturn }
		}
		x := c.expr(s, st.X)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.ret = x(fr)
			return ctlReturn
		}
	case *Assign:
		v := c.expr(s, st.Value)
		if len(st.Targets) == 1 {
			if n, ok := st.Targets[0].(*Name); ok {
				store := c.storeName(s, n.ID)
				return func(fr *frame) ctl {
					fr.t.line = line
					fr.t.step()
					store(fr, v(fr))
					return ctlNone
				}
			}
		}
		targets := make([]func(*frame, Value), len(st.Targets))
		for i, t := range st.Targets {
			targets[i] = c.assign(s, t)
		}
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			val := v(fr)
			for _, t := range targets {
				t(fr, val)
			}
			return ctlNone
		}
	case *AugAssign:
		return c.augAssign(s, st)
	case *If:
		cond := c.expr(s, st.Cond)
		body := c.stmts(s, st.Body)
		els := c.stmts(s, st.Else)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			if Truth(cond(fr)) {
				return execBlock(fr, body)
			}
			return execBlock(fr, els)
		}
	case *While:
		cond := c.expr(s, st.Cond)
		body := c.stmts(s, st.Body)
		els := c.stmts(s, st.Else)
		return func(fr *frame) ctl {
			for {
				fr.t.line = line
				fr.t.step()
				if !Truth(cond(fr)) {
					break
				}
				switch execBlock(fr, body) {
				case ctlBreak:
					return ctlNone
				case ctlReturn:
					return ctlReturn
				}
			}
			return execBlock(fr, els)
		}
	case *For:
		iter := c.expr(s, st.Iter)
		target := c.assign(s, st.Target)
		body := c.stmts(s, st.Body)
		els := c.stmts(s, st.Else)
		return func(fr *frame) ctl {
			fr.t.line = line
			it := iter(fr)
			result := ctlNone
			broke := false
			iterate(fr.t, it, func(x Value) bool {
				fr.t.line = line
				fr.t.step()
				target(fr, x)
				switch execBlock(fr, body) {
				case ctlBreak:
					broke = true
					return false
				case ctlReturn:
					result = ctlReturn
					return false
				}
				return true
			})
			if result == ctlReturn {
				return ctlReturn
			}
			if !broke {
				return execBlock(fr, els)
			}
			return ctlNone
		}
	case *FuncDef:
		mk := c.function(s, st)
		store := c.storeName(s, st.Name)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			store(fr, mk(fr))
			return ctlNone
		}
	case *Global:
		for _, n := range st.Names {
			if s.kind != scModule && s.locals[n] && !s.globals[n] {
				panic(syntaxErr(line, "name %q is assigned before the global declaration", n))
			}
		}
		return func(fr *frame) ctl { return ctlNone }
	case *Nonlocal:
		for _, n := range st.Names {
			if s.kind == scModule {
				panic(syntaxErr(line, "nonlocal declaration not allowed at module level; use `global %s`", n))
			}
			found := false
			for p := s.parent; p != nil && p.kind != scModule; p = p.parent {
				if p.locals[n] {
					found = true
					break
				}
			}
			if !found {
				panic(syntaxErr(line, "no binding for nonlocal %q found in an enclosing function", n))
			}
		}
		return func(fr *frame) ctl { return ctlNone }
	case *Del:
		dels := make([]func(*frame), len(st.Targets))
		for i, t := range st.Targets {
			dels[i] = c.del(s, t)
		}
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			for _, d := range dels {
				d(fr)
			}
			return ctlNone
		}
	case *Assert:
		cond := c.expr(s, st.Cond)
		var msg exprFn
		if st.Msg != nil {
			msg = c.expr(s, st.Msg)
		}
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			if !Truth(cond(fr)) {
				e := &Exception{Class: AssertionError, Line: line}
				if msg != nil {
					e.Args = []Value{msg(fr)}
				}
				panic(e)
			}
			return ctlNone
		}
	case *Raise:
		return c.raise(s, st)
	case *Try:
		return c.try(s, st)
	case *Import:
		return c.importStmt(s, st)
	}
	panic(syntaxErr(line, "unsupported statement"))
}

func (c *compiler) raise(s *scope, st *Raise) stmtFn {
	line := st.Line
	if st.X == nil {
		return func(fr *frame) ctl {
			fr.t.line = line
			for f := fr; f != nil; f = f.parent {
				if f.exc != nil {
					panic(f.exc)
				}
			}
			panic(&Exception{Class: RuntimeError, Args: []Value{"No active exception to reraise"}, Line: line})
		}
	}
	x := c.expr(s, st.X)
	var cause exprFn
	if st.Cause != nil {
		cause = c.expr(s, st.Cause)
	}
	return func(fr *frame) ctl {
		fr.t.line = line
		fr.t.step()
		v := x(fr)
		var e *Exception
		switch v := v.(type) {
		case *ExcClass:
			e = &Exception{Class: v, Line: line}
		case *Exception:
			e = v
			e.Line = line
		default:
			fr.t.raise(TypeError, "exceptions must derive from BaseException")
		}
		if cause != nil {
			e.Cause = cause(fr)
		}
		panic(e)
	}
}

// tryRun runs body, catching Python exceptions (not Fatal stops).
func tryRun(fr *frame, body []stmtFn) (c ctl, exc *Exception) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Exception)
			if !ok {
				panic(r)
			}
			exc = e
		}
	}()
	return execBlock(fr, body), nil
}

func (c *compiler) try(s *scope, st *Try) stmtFn {
	body := c.stmts(s, st.Body)
	type handler struct {
		typ   exprFn
		store func(*frame, Value)
		del   func(*frame)
		body  []stmtFn
		line  int
	}
	hs := make([]handler, len(st.Handlers))
	for i, h := range st.Handlers {
		hs[i].line = h.Line
		if h.Type != nil {
			hs[i].typ = c.expr(s, h.Type)
		}
		if h.Name != "" {
			hs[i].store = c.storeName(s, h.Name)
			hs[i].del = c.del(s, &Name{pos{h.Line}, h.Name})
		}
		hs[i].body = c.stmts(s, h.Body)
	}
	els := c.stmts(s, st.Else)
	fin := c.stmts(s, st.Finally)
	return func(fr *frame) ctl {
		fr.t.step()
		res, exc := tryRun(fr, body)
		var pending *Exception
		if exc != nil {
			handled := false
			for _, h := range hs {
				if h.typ != nil {
					fr.t.line = h.line
					if !excMatches(fr.t, exc, h.typ(fr)) {
						continue
					}
				}
				handled = true
				if h.store != nil {
					h.store(fr, exc)
				}
				prev := fr.exc
				fr.exc = exc
				var e2 *Exception
				if len(fin) > 0 {
					res, e2 = tryRun(fr, h.body)
				} else {
					res = execBlock(fr, h.body)
				}
				fr.exc = prev
				if h.del != nil {
					func() {
						defer func() { recover() }()
						h.del(fr)
					}()
				}
				pending = e2
				break
			}
			if !handled {
				pending = exc
			}
		} else if res == ctlNone && len(els) > 0 {
			if len(fin) > 0 {
				res, pending = tryRun(fr, els)
			} else {
				res = execBlock(fr, els)
			}
		}
		if len(fin) > 0 {
			saved := fr.ret
			if c := execBlock(fr, fin); c != ctlNone {
				return c // return/break in finally discards the exception
			}
			fr.ret = saved
		}
		if pending != nil {
			panic(pending)
		}
		return res
	}
}

// excMatches is `except typ` for exception e.
func excMatches(t *Thread, e *Exception, typ Value) bool {
	switch typ := typ.(type) {
	case *ExcClass:
		return e.Class.IsSubclass(typ)
	case Tuple:
		for _, x := range typ {
			if excMatches(t, e, x) {
				return true
			}
		}
		return false
	}
	t.raise(TypeError, "catching classes that do not inherit from BaseException is not allowed")
	return false
}

func (c *compiler) importStmt(s *scope, st *Import) stmtFn {
	line := st.Line
	root := strings.SplitN(st.Module, ".", 2)[0]
	if st.Names == nil {
		store := c.storeName(s, strings.SplitN(st.As, ".", 2)[0])
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			store(fr, fr.t.module(root))
			return ctlNone
		}
	}
	type bind struct {
		name  string
		store func(*frame, Value)
	}
	var bs []bind
	for _, n := range st.Names {
		bs = append(bs, bind{n[0], c.storeName(s, n[1])})
	}
	mod := st.Module
	return func(fr *frame) ctl {
		fr.t.line = line
		fr.t.step()
		m := fr.t.module(mod)
		for _, b := range bs {
			v, ok := m.Attrs[b.name]
			if !ok {
				names := sortedKeys(m.Attrs)
				panic(&Exception{Class: NameError, Args: []Value{"cannot import name '" + b.name + "' from '" + mod + "'; this sandbox's " + mod + " has: " + strings.Join(names, ", ")}, Line: line})
			}
			b.store(fr, v)
		}
		return ctlNone
	}
}

// names

func (c *compiler) loadName(s *scope, name string, line int) exprFn {
	r := s.resolve(name)
	switch r.kind {
	case 1:
		return func(fr *frame) Value {
			if v, ok := fr.vars[name]; ok {
				return v
			}
			fr.t.line = line
			panic(&Exception{Class: UnboundLocalError, Args: []Value{"cannot access local variable '" + name + "' where it is not associated with a value"}, Line: line})
		}
	case 2:
		d := r.depth
		return func(fr *frame) Value {
			f := fr
			for i := 0; i < d && f.parent != nil; i++ {
				f = f.parent
			}
			if v, ok := f.vars[name]; ok {
				return v
			}
			panic(&Exception{Class: NameError, Args: []Value{"cannot access free variable '" + name + "' where it is not associated with a value in enclosing scope"}, Line: line})
		}
	}
	if why, ok := refusedBuiltins[name]; ok && !s.root().locals[name] {
		panic(refuse(line, "%s() is not available: %s", name, why))
	}
	return func(fr *frame) Value {
		if v, ok := fr.t.globals[name]; ok {
			return v
		}
		if v, ok := fr.t.builtins[name]; ok {
			return v
		}
		fr.t.line = line
		panic(nameError(name, line))
	}
}

// refusedBuiltins are Python builtins a program may not use, with the fix.
var refusedBuiltins = map[string]string{
	"open":         "programs cannot read or write files; use the retrieval primitives (dense, sparse, doc)",
	"exec":         "programs cannot run generated code; write the code directly",
	"eval":         "programs cannot evaluate code; for numbers use int(s) or float(s), for JSON json.loads(s)",
	"compile":      "programs cannot compile code; write the code directly",
	"__import__":   "import the allowed modules with `import math` (allowed: " + "math, re, collections, itertools, functools, heapq, statistics, json, string)",
	"input":        "programs get no interactive input; the question is in the variable `question`",
	"globals":      "programs cannot inspect their namespace; use the variables directly",
	"locals":       "programs cannot inspect their namespace; use the variables directly",
	"vars":         "programs cannot inspect objects; use a dict",
	"breakpoint":   "there is no debugger; print() what you want to see",
	"exit":         "end the program by reaching its last line",
	"quit":         "end the program by reaching its last line",
	"help":         "print() what you want to see",
	"memoryview":   "there are no bytes in this sandbox; use str",
	"bytearray":    "there are no bytes in this sandbox; use str",
	"bytes":        "there are no bytes in this sandbox; use str",
	"setattr":      "values have no settable attributes; use a dict",
	"delattr":      "values have no settable attributes; use a dict",
	"super":        "classes are not supported; use functions and dicts",
	"object":       "classes are not supported; use functions and dicts",
	"classmethod":  "classes are not supported; use functions and dicts",
	"staticmethod": "classes are not supported; use functions and dicts",
	"property":     "classes are not supported; use functions and dicts",
	"id":           "object identity is not observable; compare with == or `is None`",
	"dir":          "programs cannot inspect objects; a Doc has .id .title .text .contents .score .routes",
	"load":         "programs cannot load files or modules (this is Python, not Starlark); import an allowed module: math, re, collections, itertools, functools, heapq, statistics, json, string",
}

func (s *scope) root() *scope {
	for s.parent != nil {
		s = s.parent
	}
	return s
}

func nameError(name string, line int) *Exception {
	msg := "name '" + name + "' is not defined"
	switch name {
	case "open", "exec", "eval", "compile", "input", "__import__", "globals", "locals", "vars", "breakpoint", "exit", "quit", "help", "memoryview", "bytearray", "bytes", "object", "super", "property", "staticmethod", "classmethod", "setattr", "delattr", "id", "hash", "type", "callable", "complex", "issubclass", "iter", "aiter", "anext", "dir":
		msg += " (the builtin " + name + "() is not available in this sandbox: programs cannot read files, run code or inspect objects"
		if name == "type" {
			msg += "; use isinstance(x, str)"
		}
		msg += ")"
	}
	return &Exception{Class: NameError, Args: []Value{msg}, Line: line}
}

func (c *compiler) storeName(s *scope, name string) func(*frame, Value) {
	r := s.resolve(name)
	switch r.kind {
	case 1:
		return func(fr *frame, v Value) { fr.vars[name] = v }
	case 2:
		d := r.depth
		return func(fr *frame, v Value) {
			f := fr
			for i := 0; i < d && f.parent != nil; i++ {
				f = f.parent
			}
			f.vars[name] = v
		}
	}
	return func(fr *frame, v Value) { fr.t.globals[name] = v }
}

func (c *compiler) del(s *scope, x Expr) func(*frame) {
	line := x.exprLine()
	switch x := x.(type) {
	case *Name:
		r := s.resolve(x.ID)
		name := x.ID
		return func(fr *frame) {
			var m map[string]Value
			switch r.kind {
			case 1:
				m = fr.vars
			case 2:
				f := fr
				for i := 0; i < r.depth && f.parent != nil; i++ {
					f = f.parent
				}
				m = f.vars
			default:
				m = fr.t.globals
			}
			if _, ok := m[name]; !ok {
				panic(nameError(name, line))
			}
			delete(m, name)
		}
	case *Subscript:
		obj := c.expr(s, x.X)
		if sl, ok := x.Index.(*SliceExpr); ok {
			lo, hi, step := c.optExpr(s, sl.Lo), c.optExpr(s, sl.Hi), c.optExpr(s, sl.Step)
			return func(fr *frame) {
				delSlice(fr.t, obj(fr), lo(fr), hi(fr), step(fr))
			}
		}
		idx := c.expr(s, x.Index)
		return func(fr *frame) { delItem(fr.t, obj(fr), idx(fr)) }
	case *TupleExpr:
		var ds []func(*frame)
		for _, e := range x.Elts {
			ds = append(ds, c.del(s, e))
		}
		return func(fr *frame) {
			for _, d := range ds {
				d(fr)
			}
		}
	case *Attr:
		return func(fr *frame) {
			fr.t.raise(AttributeError, "cannot delete attribute '%s'", x.Name)
		}
	}
	panic(syntaxErr(line, "cannot delete this expression"))
}

func (c *compiler) optExpr(s *scope, x Expr) exprFn {
	if x == nil {
		return func(*frame) Value { return None }
	}
	return c.expr(s, x)
}

// assign compiles an assignment target.
func (c *compiler) assign(s *scope, x Expr) func(*frame, Value) {
	switch x := x.(type) {
	case *Name:
		return c.storeName(s, x.ID)
	case *Attr:
		obj := c.expr(s, x.X)
		name := x.Name
		return func(fr *frame, v Value) {
			setAttr(fr.t, obj(fr), name, v)
		}
	case *Subscript:
		obj := c.expr(s, x.X)
		if sl, ok := x.Index.(*SliceExpr); ok {
			lo, hi, step := c.optExpr(s, sl.Lo), c.optExpr(s, sl.Hi), c.optExpr(s, sl.Step)
			return func(fr *frame, v Value) {
				setSlice(fr.t, obj(fr), lo(fr), hi(fr), step(fr), v)
			}
		}
		idx := c.expr(s, x.Index)
		return func(fr *frame, v Value) {
			o := obj(fr)
			setItem(fr.t, o, idx(fr), v)
		}
	case *TupleExpr:
		return c.unpack(s, x.Elts, x.Line)
	case *ListExpr:
		return c.unpack(s, x.Elts, x.Line)
	case *Starred:
		panic(syntaxErr(x.Line, "a starred assignment target must be in a list or tuple: `first, *rest = xs`"))
	}
	panic(syntaxErr(x.exprLine(), "cannot assign to this expression"))
}

func (c *compiler) unpack(s *scope, elts []Expr, line int) func(*frame, Value) {
	star := -1
	ts := make([]func(*frame, Value), len(elts))
	for i, e := range elts {
		if st, ok := e.(*Starred); ok {
			star = i
			ts[i] = c.assign(s, st.X)
			continue
		}
		ts[i] = c.assign(s, e)
	}
	n := len(elts)
	return func(fr *frame, v Value) {
		vals := toSlice(fr.t, v)
		if star < 0 {
			if len(vals) != n {
				if len(vals) > n {
					fr.t.raise(ValueError, "too many values to unpack (expected %d)", n)
				}
				fr.t.raise(ValueError, "not enough values to unpack (expected %d, got %d)", n, len(vals))
			}
			for i, t := range ts {
				t(fr, vals[i])
			}
			return
		}
		if len(vals) < n-1 {
			fr.t.raise(ValueError, "not enough values to unpack (expected at least %d, got %d)", n-1, len(vals))
		}
		for i := 0; i < star; i++ {
			ts[i](fr, vals[i])
		}
		rest := len(vals) - (n - 1 - star)
		ts[star](fr, &List{V: append([]Value{}, vals[star:rest]...)})
		for i := star + 1; i < n; i++ {
			ts[i](fr, vals[rest+i-star-1])
		}
	}
}

func (c *compiler) augAssign(s *scope, st *AugAssign) stmtFn {
	line := st.Line
	op := st.Op
	v := c.expr(s, st.Value)
	switch x := st.Target.(type) {
	case *Name:
		load := c.loadName(s, x.ID, line)
		store := c.storeName(s, x.ID)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			store(fr, inplace(fr.t, op, load(fr), v(fr)))
			return ctlNone
		}
	case *Attr:
		obj := c.expr(s, x.X)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			o := obj(fr)
			setAttr(fr.t, o, x.Name, inplace(fr.t, op, getAttr(fr.t, o, x.Name), v(fr)))
			return ctlNone
		}
	case *Subscript:
		obj := c.expr(s, x.X)
		if _, ok := x.Index.(*SliceExpr); ok {
			panic(refuse(line, "augmented assignment to a slice is not supported; write xs[a:b] = xs[a:b] + ys"))
		}
		idx := c.expr(s, x.Index)
		return func(fr *frame) ctl {
			fr.t.line = line
			fr.t.step()
			o := obj(fr)
			i := idx(fr)
			setItem(fr.t, o, i, inplace(fr.t, op, getItem(fr.t, o, i), v(fr)))
			return ctlNone
		}
	}
	panic(syntaxErr(line, "invalid target of augmented assignment"))
}

// inplace is x op= y: lists extend in place, everything else is x op y.
func inplace(t *Thread, op string, x, y Value) Value {
	if l, ok := x.(*List); ok && op == "+" {
		ys := toSlice(t, y)
		t.Charge("+= on a list", uint64(len(ys))*slotBytes, uint64(len(ys))+1)
		l.V = append(l.V, ys...)
		return l
	}
	if sx, ok := x.(*Set); ok && !sx.Frozen {
		if sy, ok := y.(*Set); ok {
			switch op {
			case "|":
				t.Charge("set |=", uint64(sy.used)*entryBytes, uint64(sy.used)+1)
				sx.merge(sy)
				return sx
			case "&", "-", "^":
				r := binary(t, op, sx, sy).(*Set)
				*sx = *r
				sx.Frozen = false
				return sx
			}
		}
	}
	if dx, ok := x.(*Dict); ok && op == "|" {
		if dy, ok := y.(*Dict); ok {
			for _, kv := range dy.Items() {
				dx.Set(kv[0], kv[1])
			}
			return dx
		}
	}
	return binary(t, op, x, y)
}

// function compiles a def or lambda into a maker evaluated at definition
// time (defaults are evaluated then, like CPython).
func (c *compiler) function(s *scope, fd *FuncDef) exprFn {
	fs := &scope{kind: scFunc, locals: map[string]bool{}, globals: map[string]bool{}, nonlocals: map[string]bool{}, parent: s}
	for _, p := range fd.Params {
		fs.locals[p.Name] = true
	}
	collectStmts(fd.Body, fs)
	for n := range fs.globals {
		if fs.nonlocals[n] {
			panic(syntaxErr(fd.Line, "name %q is both nonlocal and global", n))
		}
	}
	code := &funcCode{name: fd.Name, params: fd.Params, line: fd.Line}
	code.body = c.stmts(fs, fd.Body)
	var defaults []exprFn
	var defIdx []int
	for i, p := range fd.Params {
		if p.Default != nil {
			defaults = append(defaults, c.expr(s, p.Default))
			defIdx = append(defIdx, i)
		}
	}
	for i, p := range fd.Params {
		switch p.Kind {
		case "*":
			code.varargs = i
		case "**":
			code.kwargs = i
		}
	}
	code.varargs, code.kwargs = -1, -1
	for i, p := range fd.Params {
		switch p.Kind {
		case "*":
			code.varargs = i
		case "**":
			code.kwargs = i
		case "":
			code.npos++
		}
	}
	return func(fr *frame) Value {
		fn := &Function{Name: fd.Name, code: code, closure: fr}
		if len(defaults) > 0 {
			fn.defaults = make([]Value, len(fd.Params))
			for j, d := range defaults {
				fn.defaults[defIdx[j]] = d(fr)
			}
		}
		return fn
	}
}

// Function is a Python function (def or lambda).
type Function struct {
	Name     string
	code     *funcCode
	defaults []Value // per parameter; nil entry: no default
	closure  *frame
}

type funcCode struct {
	name    string
	params  []Param
	body    []stmtFn
	line    int
	npos    int // positional-or-keyword parameters (they come first)
	varargs int // index of *args, -1
	kwargs  int // index of **kwargs, -1
}

func (fn *Function) call(t *Thread, args []Value, kw []KV) Value {
	code := fn.code
	t.step()
	if t.depth >= maxCallDepth {
		t.Stop(t.budgetErr("depth", fn.Name+"()", uint64(t.depth+1), uint64(t.depth), maxCallDepth))
	}
	vars := make(map[string]Value, len(code.params)+4)
	ps := code.params
	if len(args) > code.npos {
		if code.varargs < 0 {
			t.raise(TypeError, "%s() takes %d positional argument%s but %d were given", fn.Name, code.npos, plural(code.npos), len(args))
		}
	}
	for i := 0; i < code.npos && i < len(args); i++ {
		vars[ps[i].Name] = args[i]
	}
	if code.varargs >= 0 {
		var extra Tuple
		if len(args) > code.npos {
			extra = append(Tuple{}, args[code.npos:]...)
		} else {
			extra = Tuple{}
		}
		vars[ps[code.varargs].Name] = extra
	}
	var kwd *Dict
	if code.kwargs >= 0 {
		kwd = NewDict()
		vars[ps[code.kwargs].Name] = kwd
	}
	for _, a := range kw {
		found := false
		for _, p := range ps {
			if p.Name == a.Name && (p.Kind == "" || p.Kind == "kwonly") {
				if _, dup := vars[p.Name]; dup {
					t.raise(TypeError, "%s() got multiple values for argument '%s'", fn.Name, a.Name)
				}
				vars[p.Name] = a.Value
				found = true
				break
			}
		}
		if !found {
			if kwd == nil {
				t.raise(TypeError, "%s() got an unexpected keyword argument '%s'", fn.Name, a.Name)
			}
			kwd.Set(a.Name, a.Value)
		}
	}
	var missing []string
	for i, p := range ps {
		if p.Kind == "*" || p.Kind == "**" {
			continue
		}
		if _, ok := vars[p.Name]; ok {
			continue
		}
		if fn.defaults != nil && fn.defaults[i] != nil {
			vars[p.Name] = fn.defaults[i]
			continue
		}
		missing = append(missing, "'"+p.Name+"'")
	}
	if len(missing) > 0 {
		kind := "positional"
		for _, p := range ps {
			if "'"+p.Name+"'" == missing[0] && p.Kind == "kwonly" {
				kind = "keyword-only"
			}
		}
		list := missing[0]
		if len(missing) == 2 {
			list = missing[0] + " and " + missing[1]
		} else if len(missing) > 2 {
			list = strings.Join(missing[:len(missing)-1], ", ") + ", and " + missing[len(missing)-1]
		}
		t.raise(TypeError, "%s() missing %d required %s argument%s: %s", fn.Name, len(missing), kind, plural(len(missing)), list)
	}
	t.Charge("call", uint64(len(vars))*entryBytes/2, 0)
	fr := &frame{t: t, vars: vars, parent: fn.closure}
	line := t.line
	t.depth++
	c := execBlock(fr, code.body)
	t.depth--
	t.line = line
	if c == ctlReturn {
		return fr.ret
	}
	return None
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// expressions

func (c *compiler) expr(s *scope, x Expr) exprFn {
	line := x.exprLine()
	switch x := x.(type) {
	case *Name:
		return c.loadName(s, x.ID, line)
	case *IntLit:
		var v Value = x.V
		if x.Big != nil {
			v = new(big.Int).Set(x.Big)
		}
		return func(*frame) Value { return v }
	case *FloatLit:
		v := x.V
		return func(*frame) Value { return v }
	case *StrLit:
		v := x.V
		return func(*frame) Value { return v }
	case *NoneLit:
		return func(*frame) Value { return None }
	case *BoolLit:
		v := x.V
		return func(*frame) Value { return v }
	case *EllipsisLit:
		return func(*frame) Value { return None }
	case *FString:
		return c.fstring(s, x)
	case *BinOp:
		a, b := c.expr(s, x.X), c.expr(s, x.Y)
		op := x.Op
		if op == "+" {
			return func(fr *frame) Value {
				l, r := a(fr), b(fr)
				if li, ok := l.(int64); ok {
					if ri, ok := r.(int64); ok {
						if s := li + ri; (s > li) == (ri > 0) {
							return s
						}
					}
				}
				fr.t.line = line
				return binary(fr.t, op, l, r)
			}
		}
		return func(fr *frame) Value {
			l, r := a(fr), b(fr)
			fr.t.line = line
			return binary(fr.t, op, l, r)
		}
	case *UnaryOp:
		a := c.expr(s, x.X)
		op := x.Op
		if op == "not" {
			return func(fr *frame) Value { return !Truth(a(fr)) }
		}
		return func(fr *frame) Value {
			v := a(fr)
			fr.t.line = line
			return unary(fr.t, op, v)
		}
	case *BoolOp:
		a, b := c.expr(s, x.X), c.expr(s, x.Y)
		if x.Op == "and" {
			return func(fr *frame) Value {
				v := a(fr)
				if !Truth(v) {
					return v
				}
				return b(fr)
			}
		}
		return func(fr *frame) Value {
			v := a(fr)
			if Truth(v) {
				return v
			}
			return b(fr)
		}
	case *Compare:
		first := c.expr(s, x.First)
		rest := make([]exprFn, len(x.Rest))
		for i, r := range x.Rest {
			rest[i] = c.expr(s, r)
		}
		ops := x.Ops
		if len(ops) == 1 {
			op := ops[0]
			r := rest[0]
			return func(fr *frame) Value {
				a := first(fr)
				b := r(fr)
				fr.t.line = line
				return compare(fr.t, op, a, b)
			}
		}
		return func(fr *frame) Value {
			a := first(fr)
			for i, op := range ops {
				b := rest[i](fr)
				fr.t.line = line
				if !compare(fr.t, op, a, b) {
					return false
				}
				a = b
			}
			return true
		}
	case *Call:
		return c.call(s, x)
	case *Attr:
		obj := c.expr(s, x.X)
		name := x.Name
		return func(fr *frame) Value {
			o := obj(fr)
			fr.t.line = line
			return getAttr(fr.t, o, name)
		}
	case *Subscript:
		obj := c.expr(s, x.X)
		if sl, ok := x.Index.(*SliceExpr); ok {
			lo, hi, step := c.optExpr(s, sl.Lo), c.optExpr(s, sl.Hi), c.optExpr(s, sl.Step)
			return func(fr *frame) Value {
				o := obj(fr)
				l, h, st := lo(fr), hi(fr), step(fr)
				fr.t.line = line
				return getSlice(fr.t, o, l, h, st)
			}
		}
		idx := c.expr(s, x.Index)
		return func(fr *frame) Value {
			o := obj(fr)
			i := idx(fr)
			fr.t.line = line
			return getItem(fr.t, o, i)
		}
	case *SliceExpr:
		panic(syntaxErr(line, "a slice a:b is allowed only inside brackets xs[a:b]"))
	case *ListExpr:
		elts := c.elts(s, x.Elts)
		return func(fr *frame) Value { return &List{V: elts(fr)} }
	case *TupleExpr:
		elts := c.elts(s, x.Elts)
		return func(fr *frame) Value { return Tuple(elts(fr)) }
	case *SetExpr:
		elts := c.elts(s, x.Elts)
		constant := len(x.Elts) > 2
		for _, e := range x.Elts {
			constant = constant && isConstExpr(e)
		}
		if constant {
			// CPython folds a display of ≥ 3 constants into a frozenset
			// constant and builds the set by merging it: its order.
			return func(fr *frame) Value {
				vs := elts(fr)
				fr.t.line = line
				fr.t.Charge("set literal", uint64(len(vs))*entryBytes*2, uint64(len(vs)))
				frozen := NewSet()
				for _, v := range vs {
					frozen.Add(v)
				}
				// the compiler's constant merging rebuilds the frozenset
				// from its own iteration order (merge_consts_recursive)
				again := NewSet()
				for _, v := range frozen.Keys() {
					again.Add(v)
				}
				frozen = again
				st := NewSet()
				st.merge(frozen)
				return st
			}
		}
		return func(fr *frame) Value {
			vs := elts(fr)
			fr.t.line = line
			st := NewSet()
			fr.t.Charge("set literal", uint64(len(vs))*entryBytes, uint64(len(vs)))
			for _, v := range vs {
				if !st.Add(v) {
					fr.t.raise(TypeError, "unhashable type: '%s'", unhashableName(v))
				}
			}
			return st
		}
	case *DictExpr:
		keys := make([]exprFn, len(x.Keys))
		vals := make([]exprFn, len(x.Values))
		for i := range x.Keys {
			if x.Keys[i] != nil {
				keys[i] = c.expr(s, x.Keys[i])
			}
			vals[i] = c.expr(s, x.Values[i])
		}
		return func(fr *frame) Value {
			d := NewDict()
			fr.t.Charge("dict literal", uint64(len(keys))*entryBytes, uint64(len(keys)))
			for i := range keys {
				if keys[i] == nil {
					m, ok := vals[i](fr).(*Dict)
					if !ok {
						fr.t.raise(TypeError, "'**' needs a dict")
					}
					fr.t.Charge("dict **", uint64(m.Len())*entryBytes, uint64(m.Len()))
					for _, kv := range m.Items() {
						d.Set(kv[0], kv[1])
					}
					continue
				}
				k := keys[i](fr)
				v := vals[i](fr)
				if !d.Set(k, v) {
					fr.t.line = line
					fr.t.raise(TypeError, "unhashable type: '%s'", unhashableName(k))
				}
			}
			return d
		}
	case *Comp:
		return c.comp(s, x)
	case *Lambda:
		return c.function(s, x.Fn)
	case *IfExp:
		cond, a, b := c.expr(s, x.Cond), c.expr(s, x.Then), c.expr(s, x.Else)
		return func(fr *frame) Value {
			if Truth(cond(fr)) {
				return a(fr)
			}
			return b(fr)
		}
	case *Starred:
		panic(syntaxErr(line, "a starred expression `*x` is allowed only in calls f(*x), literals [*a, *b] and assignment targets"))
	case *NamedExpr:
		v := c.expr(s, x.X)
		ts := s
		for ts.kind == scComp {
			ts = ts.parent
		}
		// bind in the nearest non-comprehension scope, through the frames
		depth := 0
		for p := s; p != ts; p = p.parent {
			depth++
		}
		var store func(*frame, Value)
		if ts.kind == scModule {
			store = func(fr *frame, val Value) { fr.t.globals[x.Name] = val }
		} else {
			inner := c.storeName(ts, x.Name)
			store = func(fr *frame, val Value) {
				f := fr
				for i := 0; i < depth; i++ {
					f = f.parent
				}
				inner(f, val)
			}
		}
		return func(fr *frame) Value {
			val := v(fr)
			store(fr, val)
			return val
		}
	}
	panic(syntaxErr(line, "unsupported expression"))
}

// isConstExpr reports whether CPython's AST optimizer folds x to a constant.
func isConstExpr(x Expr) bool {
	switch x := x.(type) {
	case *IntLit, *FloatLit, *StrLit, *NoneLit, *BoolLit, *EllipsisLit:
		return true
	case *UnaryOp:
		switch x.X.(type) {
		case *IntLit, *FloatLit:
			return x.Op == "-" || x.Op == "+" || x.Op == "~"
		}
	case *TupleExpr:
		for _, e := range x.Elts {
			if !isConstExpr(e) {
				return false
			}
		}
		return true
	}
	return false
}

// elts compiles list/tuple/set elements with *starred items.
func (c *compiler) elts(s *scope, xs []Expr) func(*frame) []Value {
	fs := make([]exprFn, len(xs))
	star := make([]bool, len(xs))
	any := false
	for i, x := range xs {
		if st, ok := x.(*Starred); ok {
			fs[i] = c.expr(s, st.X)
			star[i] = true
			any = true
			continue
		}
		fs[i] = c.expr(s, x)
	}
	if !any {
		return func(fr *frame) []Value {
			out := make([]Value, len(fs))
			for i, f := range fs {
				out[i] = f(fr)
			}
			return out
		}
	}
	return func(fr *frame) []Value {
		out := make([]Value, 0, len(fs))
		for i, f := range fs {
			if star[i] {
				vs := toSlice(fr.t, f(fr))
				fr.t.Charge("*unpacking", uint64(len(vs))*slotBytes, uint64(len(vs)))
				out = append(out, vs...)
				continue
			}
			out = append(out, f(fr))
		}
		return out
	}
}

func (c *compiler) call(s *scope, x *Call) exprFn {
	line := x.Line
	simple := true
	for _, a := range x.Args {
		if a.Star || a.DStar || a.Name != "" {
			simple = false
		}
	}
	var posFns []exprFn
	var posStar []bool
	type kwFn struct {
		name  string
		dstar bool
		f     exprFn
	}
	var kws []kwFn
	for _, a := range x.Args {
		switch {
		case a.DStar:
			kws = append(kws, kwFn{dstar: true, f: c.expr(s, a.Value)})
		case a.Name != "":
			kws = append(kws, kwFn{name: a.Name, f: c.expr(s, a.Value)})
		default:
			posFns = append(posFns, c.expr(s, a.Value))
			posStar = append(posStar, a.Star)
		}
	}
	evalArgs := func(fr *frame) ([]Value, []KV) {
		var args []Value
		if simple {
			args = make([]Value, len(posFns))
			for i, f := range posFns {
				args[i] = f(fr)
			}
			return args, nil
		}
		args = make([]Value, 0, len(posFns))
		for i, f := range posFns {
			if posStar[i] {
				vs := toSlice(fr.t, f(fr))
				fr.t.Charge("*args", uint64(len(vs))*slotBytes, uint64(len(vs)))
				args = append(args, vs...)
				continue
			}
			args = append(args, f(fr))
		}
		var kw []KV
		for _, k := range kws {
			if k.dstar {
				d, ok := k.f(fr).(*Dict)
				if !ok {
					fr.t.line = line
					fr.t.raise(TypeError, "argument after ** must be a dict")
				}
				for _, kv := range d.Items() {
					name, ok := kv[0].(string)
					if !ok {
						fr.t.raise(TypeError, "keywords must be strings")
					}
					for _, e := range kw {
						if e.Name == name {
							fr.t.raise(TypeError, "got multiple values for keyword argument '%s'", name)
						}
					}
					kw = append(kw, KV{name, kv[1]})
				}
				continue
			}
			kw = append(kw, KV{k.name, k.f(fr)})
		}
		return args, kw
	}
	if at, ok := x.Fn.(*Attr); ok {
		obj := c.expr(s, at.X)
		name := at.Name
		return func(fr *frame) Value {
			o := obj(fr)
			args, kw := evalArgs(fr)
			fr.t.line = line
			return callMethod(fr.t, o, name, args, kw)
		}
	}
	fn := c.expr(s, x.Fn)
	return func(fr *frame) Value {
		f := fn(fr)
		args, kw := evalArgs(fr)
		fr.t.line = line
		return CallValue(fr.t, f, args, kw)
	}
}

// CallValue calls a callable value.
func CallValue(t *Thread, f Value, args []Value, kw []KV) Value {
	switch f := f.(type) {
	case *Function:
		return f.call(t, args, kw)
	case *Builtin:
		t.step()
		return f.Fn(t, args, kw)
	case *Type:
		t.step()
		return f.Call(t, args, kw)
	case *ExcClass:
		t.step()
		if len(kw) > 0 {
			t.raise(TypeError, "%s() takes no keyword arguments", f.Name)
		}
		return &Exception{Class: f, Args: append([]Value{}, args...), Line: t.line}
	}
	t.raise(TypeError, "'%s' object is not callable", typeName(f))
	return nil
}

// comprehensions

func (c *compiler) comp(s *scope, x *Comp) exprFn {
	cs := &scope{kind: scComp, locals: map[string]bool{}, globals: map[string]bool{}, nonlocals: map[string]bool{}, parent: s}
	for _, cl := range x.Clauses {
		collectTargetNames(cl.Target, cs)
	}
	// the first iterable is evaluated in the enclosing scope
	firstIter := c.expr(s, x.Clauses[0].Iter)
	type clause struct {
		iter   exprFn
		target func(*frame, Value)
		ifs    []exprFn
	}
	cls := make([]clause, len(x.Clauses))
	for i, cl := range x.Clauses {
		if i > 0 {
			cls[i].iter = c.expr(cs, cl.Iter)
		}
		cls[i].target = c.assign(cs, cl.Target)
		for _, e := range cl.Ifs {
			cls[i].ifs = append(cls[i].ifs, c.expr(cs, e))
		}
	}
	elt := c.expr(cs, x.Elt)
	var val exprFn
	if x.Val != nil {
		val = c.expr(cs, x.Val)
	}
	kind := x.Kind
	line := x.Line
	if kind == "gen" && len(cls) == 1 {
		cl := cls[0]
		return func(fr *frame) Value {
			src := getIter(fr.t, firstIter(fr))
			cf := &frame{t: fr.t, vars: map[string]Value{}, parent: fr}
			return &Iterator{Name: "generator", Next: func() (Value, bool) {
				for {
					v, ok := src.Next()
					if !ok {
						return nil, false
					}
					fr.t.step()
					cl.target(cf, v)
					pass := true
					for _, f := range cl.ifs {
						if !Truth(f(cf)) {
							pass = false
							break
						}
					}
					if pass {
						return elt(cf), true
					}
				}
			}}
		}
	}
	return func(fr *frame) Value {
		cf := &frame{t: fr.t, vars: map[string]Value{}, parent: fr}
		var list []Value
		var set *Set
		var dict *Dict
		switch kind {
		case "set":
			set = NewSet()
		case "dict":
			dict = NewDict()
		}
		var loop func(i int, it Value)
		loop = func(i int, it Value) {
			cl := cls[i]
			iterate(fr.t, it, func(v Value) bool {
				fr.t.step()
				cl.target(cf, v)
				for _, f := range cl.ifs {
					if !Truth(f(cf)) {
						return true
					}
				}
				if i+1 < len(cls) {
					loop(i+1, cls[i+1].iter(cf))
					return true
				}
				switch kind {
				case "list", "gen":
					fr.t.Charge("a comprehension", slotBytes, 0)
					list = append(list, elt(cf))
				case "set":
					fr.t.Charge("a set comprehension", entryBytes, 0)
					e := elt(cf)
					if !set.Add(e) {
						fr.t.line = line
						fr.t.raise(TypeError, "unhashable type: '%s'", unhashableName(e))
					}
				case "dict":
					fr.t.Charge("a dict comprehension", entryBytes, 0)
					k := elt(cf)
					if !dict.Set(k, val(cf)) {
						fr.t.line = line
						fr.t.raise(TypeError, "unhashable type: '%s'", unhashableName(k))
					}
				}
				return true
			})
		}
		loop(0, firstIter(fr))
		switch kind {
		case "set":
			return set
		case "dict":
			return dict
		case "gen":
			return sliceIter("generator", list)
		}
		return &List{V: list}
	}
}

func collectTargetNames(x Expr, s *scope) {
	switch x := x.(type) {
	case *Name:
		s.locals[x.ID] = true
	case *TupleExpr:
		for _, e := range x.Elts {
			collectTargetNames(e, s)
		}
	case *ListExpr:
		for _, e := range x.Elts {
			collectTargetNames(e, s)
		}
	case *Starred:
		collectTargetNames(x.X, s)
	}
}

func sliceIter(name string, vs []Value) *Iterator {
	i := 0
	return &Iterator{Name: name, Next: func() (Value, bool) {
		if i >= len(vs) {
			return nil, false
		}
		i++
		return vs[i-1], true
	}}
}

// f-strings

func (c *compiler) fstring(s *scope, x *FString) exprFn {
	type part struct {
		lit  string
		expr exprFn
		conv byte
		spec exprFn // nil: no spec
		text string
	}
	parts := make([]part, len(x.Parts))
	for i, p := range x.Parts {
		if p.Expr == nil {
			parts[i].lit = p.Lit
			continue
		}
		parts[i].expr = c.expr(s, p.Expr)
		parts[i].conv = p.Conv
		parts[i].text = p.Text
		if p.Spec != nil {
			parts[i].spec = c.fstring(s, &FString{pos{x.Line}, p.Spec})
		}
	}
	line := x.Line
	return func(fr *frame) Value {
		var sb partsBuilder
		for _, p := range parts {
			if p.expr == nil {
				sb.WriteString(p.lit)
				continue
			}
			v := p.expr(fr)
			fr.t.line = line
			if p.text != "" {
				sb.WriteString(p.text)
			}
			switch p.conv {
			case 'r':
				v = reprCharged(fr.t, v)
			case 's':
				v = strCharged(fr.t, v)
			case 'a':
				v = asciiRepr(reprCharged(fr.t, v))
			}
			spec := ""
			if p.spec != nil {
				spec = p.spec(fr).(string)
			}
			out := formatValue(fr.t, v, spec)
			fr.t.Charge("f-string", uint64(len(out))*2, uint64(len(out))/1024)
			sb.WriteString(out)
		}
		return sb.String()
	}
}
