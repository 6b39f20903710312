package hybrid

import (
	"strings"
	"unicode/utf8"
)

// tri is SQL's three-valued truth: false, true or unknown (NULL).
type tri int8

const (
	triFalse tri = iota
	triTrue
	triNull
)

func triNot(t tri) tri {
	switch t {
	case triTrue:
		return triFalse
	case triFalse:
		return triTrue
	}
	return triNull
}

// cell is one stored value; Kind 0 is NULL.
type cell struct {
	Kind int8 // 0 NULL, ValString, ValInt, ValReal
	S    string
	I    int64
	F    float64
}

// evalRow evaluates e for one row in plain Go with SQLite's semantics
// (three-valued logic; BINARY collation of the NFC forms of stored text; numeric comparison across INTEGER
// and REAL; LIKE with % and _ and ASCII case folding; ASCII-only LOWER and
// UPPER; LENGTH in characters). col returns the cell of a column by its
// schema name; in reports placeholder membership. It is the oracle the
// SQL path is tested against.
func evalRow(e Expr, col func(string) cell, in func(*InSet) bool) tri {
	switch x := e.(type) {
	case *Logic:
		res := triTrue
		if x.Op == "OR" {
			res = triFalse
		}
		for _, a := range x.Args {
			v := evalRow(a, col, in)
			if x.Op == "AND" {
				if v == triFalse {
					return triFalse
				}
				if v == triNull {
					res = triNull
				}
			} else {
				if v == triTrue {
					return triTrue
				}
				if v == triNull {
					res = triNull
				}
			}
		}
		return res
	case *Not:
		return triNot(evalRow(x.X, col, in))
	case *Cmp:
		l := operandValue(x.Left, col)
		if l.Kind == 0 {
			return triNull
		}
		c := compare(l, x.Right)
		var ok bool
		switch x.Op {
		case "=":
			ok = c == 0
		case "!=":
			ok = c != 0
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		}
		return triOf(ok)
	case *InList:
		l := operandValue(x.Left, col)
		if l.Kind == 0 {
			return triNull
		}
		found := false
		for _, v := range x.Values {
			if compare(l, v) == 0 {
				found = true
				break
			}
		}
		return triOf(found != x.Negate)
	case *Between:
		l := operandValue(x.Left, col)
		if l.Kind == 0 {
			return triNull
		}
		ok := compare(l, x.Lo) >= 0 && compare(l, x.Hi) <= 0
		return triOf(ok != x.Negate)
	case *Like:
		l := operandValue(x.Left, col)
		if l.Kind == 0 {
			return triNull
		}
		return triOf(likeMatch(x.Pattern.S, l.S) != x.Negate)
	case *IsNull:
		l := operandValue(x.Left, col)
		return triOf((l.Kind == 0) != x.Negate)
	case *InSet:
		return triOf(in(x) != x.Negate)
	}
	return triNull
}

func triOf(b bool) tri {
	if b {
		return triTrue
	}
	return triFalse
}

func operandValue(o Operand, col func(string) cell) cell {
	c := col(o.Column)
	if c.Kind == 0 {
		return c
	}
	if c.Kind == ValString {
		c.S = nfcString(c.S) // text compares in NFC (nfc.go)
	}
	switch o.Func {
	case "LOWER":
		return cell{Kind: ValString, S: asciiMap(c.S, 'A', 'Z', 'a'-'A')}
	case "UPPER":
		return cell{Kind: ValString, S: asciiMap(c.S, 'a', 'z', 'A'-'a')}
	case "LENGTH":
		return cell{Kind: ValInt, I: int64(utf8.RuneCountInString(c.S))}
	}
	return c
}

func asciiMap(s string, lo, hi byte, delta int) string {
	b := []byte(s)
	for i, c := range b {
		if c >= lo && c <= hi {
			b[i] = byte(int(c) + delta)
		}
	}
	return string(b)
}

// compare orders a stored value against a literal of a compatible type
// (Check guarantees text vs string, number vs number).
func compare(l cell, v Value) int {
	if l.Kind == ValString {
		return strings.Compare(l.S, v.S)
	}
	if l.Kind == ValInt && v.Kind == ValInt {
		switch {
		case l.I < v.I:
			return -1
		case l.I > v.I:
			return 1
		}
		return 0
	}
	lf, vf := l.F, v.F
	if l.Kind == ValInt {
		lf = float64(l.I)
	}
	if v.Kind == ValInt {
		vf = float64(v.I)
	}
	switch {
	case lf < vf:
		return -1
	case lf > vf:
		return 1
	}
	return 0
}

// likeMatch implements SQLite's default LIKE: '%' matches any sequence of
// characters, '_' exactly one character, ASCII letters match regardless of
// case, no escape character.
func likeMatch(pattern, s string) bool {
	p := []rune(pattern)
	t := []rune(s)
	fold := func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	pi, ti := 0, 0
	starP, starT := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && p[pi] == '%':
			starP, starT = pi, ti
			pi++
		case pi < len(p) && (p[pi] == '_' || fold(p[pi]) == fold(t[ti])):
			pi++
			ti++
		case starP >= 0:
			pi = starP + 1
			starT++
			ti = starT
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}
