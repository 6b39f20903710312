package hybrid

import (
	"math"
	"strconv"
	"strings"
)

// literal renders v in DSL/SQL syntax: strings in single quotes with
// apostrophes doubled, reals always with a '.' or exponent so that they
// parse back as reals.
func (v Value) literal() string {
	switch v.Kind {
	case ValString:
		return "'" + strings.ReplaceAll(v.S, "'", "''") + "'"
	case ValInt:
		return strconv.FormatInt(v.I, 10)
	case ValReal:
		s := strconv.FormatFloat(v.F, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	}
	return "?"
}

// arg returns the value bound for v.
func (v Value) arg() any {
	switch v.Kind {
	case ValString:
		return v.S
	case ValInt:
		return v.I
	default:
		return v.F
	}
}

// quoteIdent writes a column name for the DSL: bare unless it is a keyword.
func dslIdent(n string) string {
	u := strings.ToUpper(n)
	if forbiddenWords[u] || grammarWords[u] {
		return `"` + n + `"`
	}
	return n
}

// Format renders e as DSL text ("WHERE" not included) that Parse reads
// back into an equal tree. Literals are escaped (” inside strings).
func Format(e Expr) string {
	var b strings.Builder
	render(&b, e, "", false, nil)
	return b.String()
}

// sqlArgs receives bound values during SQL generation; nil renders
// literals inline (Format).
type sqlArgs struct {
	args []any
	sets func(*InSet) []int32
	// constant, when set, replaces every placeholder predicate by a
	// constant (the structural-only super-query of the generator).
	constant *bool
	// nfc names the columns compared through nfcFunc (nfc.go).
	nfc map[string]bool
}

func render(b *strings.Builder, e Expr, parent string, sql bool, a *sqlArgs) {
	ident := func(n string) string {
		if sql {
			return `"` + n + `"`
		}
		return dslIdent(n)
	}
	operand := func(o Operand) string {
		col := ident(o.Column)
		if sql && a != nil && a.nfc[o.Column] {
			col = nfcFunc + "(" + col + ")"
		}
		if o.Func != "" {
			return o.Func + "(" + col + ")"
		}
		return col
	}
	val := func(v Value) string {
		if sql {
			a.args = append(a.args, v.arg())
			return "?"
		}
		return v.literal()
	}
	not := func(neg bool) string {
		if neg {
			return "NOT "
		}
		return ""
	}
	switch x := e.(type) {
	case *Logic:
		paren := parent != ""
		if paren {
			b.WriteByte('(')
		}
		for i, arg := range x.Args {
			if i > 0 {
				b.WriteString(" " + x.Op + " ")
			}
			render(b, arg, x.Op, sql, a)
		}
		if paren {
			b.WriteByte(')')
		}
	case *Not:
		b.WriteString("NOT ")
		if _, ok := x.X.(*Logic); ok {
			render(b, x.X, "NOT", sql, a)
		} else {
			b.WriteByte('(')
			render(b, x.X, "", sql, a)
			b.WriteByte(')')
		}
	case *Cmp:
		b.WriteString(operand(x.Left) + " " + x.Op + " " + val(x.Right))
	case *InList:
		b.WriteString(operand(x.Left) + " " + not(x.Negate) + "IN (")
		for i, v := range x.Values {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(val(v))
		}
		b.WriteByte(')')
	case *Between:
		b.WriteString(operand(x.Left) + " " + not(x.Negate) + "BETWEEN " + val(x.Lo) + " AND " + val(x.Hi))
	case *Like:
		b.WriteString(operand(x.Left) + " " + not(x.Negate) + "LIKE " + val(x.Pattern))
	case *IsNull:
		b.WriteString(operand(x.Left) + " IS " + not(x.Negate) + "NULL")
	case *InSet:
		if !sql {
			b.WriteString(ident(x.Column) + " " + not(x.Negate) + "IN " + x.Placeholder())
			return
		}
		if a.constant != nil {
			b.WriteString(map[bool]string{true: "1", false: "0"}[*a.constant])
			return
		}
		b.WriteString(`"_row" ` + not(x.Negate) + "IN (")
		for i, r := range a.sets(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			a.args = append(a.args, int64(r))
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
}

// SQL renders the SELECT the executor runs for e: every literal and every
// placeholder row is a bound parameter (args, in order); only identifiers
// checked against the schema and fixed keywords are written into the text.
// sets returns the rows of a placeholder's retrieval (the executor's top-K).
func SQL(e Expr, sets func(*InSet) []int32) (query string, args []any) {
	return sqlNFC(e, sets, nil)
}

// sqlNFC is SQL with the operands of the columns in nfc compared in NFC
// through nfcFunc (nfc.go).
func sqlNFC(e Expr, sets func(*InSet) []int32, nfc map[string]bool) (query string, args []any) {
	var b strings.Builder
	a := &sqlArgs{sets: sets, nfc: nfc}
	b.WriteString(`SELECT "_row" FROM "rows" WHERE `)
	render(&b, e, "", true, a)
	return b.String(), a.args
}

// finite reports whether f is a finite number (NaN and ±Inf are not).
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// structuralSQL renders a count query for e with every placeholder
// predicate replaced by the constant val. When no placeholder sits under
// a negation, val = true gives a superset of the program's rows and
// val = false a subset, without any vector retrieval.
func structuralSQL(e Expr, val bool) (query string, args []any) {
	var b strings.Builder
	a := &sqlArgs{constant: &val}
	b.WriteString(`SELECT count(*) FROM "rows" WHERE `)
	render(&b, e, "", true, a)
	return b.String(), a.args
}
