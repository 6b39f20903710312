package pyjson

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/sdk/python/pyfmt"
)

// MaxDepth bounds the nesting of arrays and objects in Loads and Dumps.
const MaxDepth = 1000

// Object is a dict: key/value pairs in insertion order.
type Object struct {
	Keys   []any
	Values []any
	index  map[any]int
}

// Len is the number of pairs.
func (o *Object) Len() int { return len(o.Keys) }

// Set stores v under k: a new key goes last, an existing key keeps its place.
// Keys are compared as Go values (string, int64, float64, bool, nil); a
// *big.Int key is compared by its decimal text.
func (o *Object) Set(k, v any) {
	if o.index == nil {
		o.index = make(map[any]int, len(o.Keys))
		for i, key := range o.Keys {
			o.index[mapKey(key)] = i
		}
	}
	mk := mapKey(k)
	if i, ok := o.index[mk]; ok {
		o.Values[i] = v
		return
	}
	o.index[mk] = len(o.Keys)
	o.Keys = append(o.Keys, k)
	o.Values = append(o.Values, v)
}

// Get returns the value under k.
func (o *Object) Get(k any) (any, bool) {
	mk := mapKey(k)
	for i, key := range o.Keys {
		if mapKey(key) == mk {
			return o.Values[i], true
		}
	}
	return nil, false
}

type bigKey string

func mapKey(k any) any {
	if b, ok := k.(*big.Int); ok {
		return bigKey(b.String())
	}
	return k
}

// Unsupported stands for a Python value json cannot encode.
type Unsupported struct{ TypeName string }

// TypeError is Python's TypeError from json.dumps.
type TypeError struct{ Msg string }

func (e *TypeError) Error() string { return e.Msg }

// ValueError is Python's ValueError from json.dumps / json.loads.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

// DecodeError is json.JSONDecodeError.
type DecodeError struct {
	Msg      string // the bare message, "Expecting value"
	Pos      int    // char offset in code points
	Line     int    // 1-based
	Col      int    // 1-based
	Document string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: line %d column %d (char %d)", e.Msg, e.Line, e.Col, e.Pos)
}

// DumpOptions are json.dumps's keyword arguments. The zero value is NOT
// Python's default; start from Defaults().
type DumpOptions struct {
	SkipKeys    bool
	EnsureASCII bool
	AllowNaN    bool
	// Indent: nil for None, an int (spaces) or a string.
	Indent any
	// ItemSep and KeySep replace the separators when HasSeparators.
	HasSeparators   bool
	ItemSep, KeySep string
	SortKeys        bool
}

// Defaults are json.dumps's defaults: ensure_ascii=True, allow_nan=True.
func Defaults() DumpOptions { return DumpOptions{EnsureASCII: true, AllowNaN: true} }

// Dumps is json.dumps(v, **o).
func Dumps(v any, o DumpOptions) (string, error) {
	e := &encoder{o: o, itemSep: ", ", keySep: ": "}
	switch ind := o.Indent.(type) {
	case nil:
	case int:
		e.indent, e.hasIndent = strings.Repeat(" ", max(ind, 0)), true
	case int64:
		e.indent, e.hasIndent = strings.Repeat(" ", int(max(ind, 0))), true
	case string:
		e.indent, e.hasIndent = ind, true
	default:
		return "", &TypeError{Msg: fmt.Sprintf("indent must be None, an int or a str, not %T", ind)}
	}
	if e.hasIndent {
		e.itemSep = ","
	}
	if o.HasSeparators {
		e.itemSep, e.keySep = o.ItemSep, o.KeySep
	}
	if err := e.value(v, 0); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

type encoder struct {
	o               DumpOptions
	b               strings.Builder
	indent          string
	hasIndent       bool
	itemSep, keySep string
	stack           []*Object
}

func (e *encoder) newline(depth int) {
	e.b.WriteByte('\n')
	for i := 0; i < depth; i++ {
		e.b.WriteString(e.indent)
	}
}

func (e *encoder) float(f float64) (string, error) {
	switch {
	case math.IsNaN(f), math.IsInf(f, 0):
		if !e.o.AllowNaN {
			return "", &ValueError{Msg: "Out of range float values are not JSON compliant"}
		}
		if math.IsNaN(f) {
			return "NaN", nil
		}
		if f > 0 {
			return "Infinity", nil
		}
		return "-Infinity", nil
	}
	return pyfmt.FloatRepr(f), nil
}

func (e *encoder) value(v any, depth int) error {
	if depth > MaxDepth {
		return &ValueError{Msg: "maximum recursion depth exceeded while encoding a JSON object"}
	}
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		if x {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case int:
		e.b.WriteString(strconv.Itoa(x))
	case int32:
		e.b.WriteString(strconv.FormatInt(int64(x), 10))
	case *big.Int:
		e.b.WriteString(x.String())
	case float64:
		s, err := e.float(x)
		if err != nil {
			return err
		}
		e.b.WriteString(s)
	case string:
		e.str(x)
	case []any:
		if len(x) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				e.b.WriteString(e.itemSep)
			}
			if e.hasIndent {
				e.newline(depth + 1)
			}
			if err := e.value(it, depth+1); err != nil {
				return err
			}
		}
		if e.hasIndent {
			e.newline(depth)
		}
		e.b.WriteByte(']')
	case *Object:
		return e.object(x, depth)
	case Unsupported:
		return &TypeError{Msg: fmt.Sprintf("Object of type %s is not JSON serializable", x.TypeName)}
	default:
		return &TypeError{Msg: fmt.Sprintf("Object of type %T is not JSON serializable", v)}
	}
	return nil
}

func (e *encoder) object(o *Object, depth int) error {
	if o == nil {
		e.b.WriteString("null")
		return nil
	}
	if len(o.Keys) == 0 {
		e.b.WriteString("{}")
		return nil
	}
	for _, p := range e.stack {
		if p == o {
			return &ValueError{Msg: "Circular reference detected"}
		}
	}
	e.stack = append(e.stack, o)
	defer func() { e.stack = e.stack[:len(e.stack)-1] }()
	order := make([]int, len(o.Keys))
	for i := range order {
		order[i] = i
	}
	if e.o.SortKeys {
		var err error
		sort.SliceStable(order, func(a, b int) bool {
			less, lerr := keyLess(o.Keys[order[a]], o.Keys[order[b]])
			if lerr != nil && err == nil {
				err = lerr
			}
			return less
		})
		if err != nil {
			return err
		}
	}
	e.b.WriteByte('{')
	first := true
	for _, i := range order {
		k := o.Keys[i]
		var ks string
		switch x := k.(type) {
		case string:
			ks = x
		case float64:
			s, err := e.float(x)
			if err != nil {
				return err
			}
			ks = s
		case bool:
			ks = "false"
			if x {
				ks = "true"
			}
		case nil:
			ks = "null"
		case int64:
			ks = strconv.FormatInt(x, 10)
		case int:
			ks = strconv.Itoa(x)
		case *big.Int:
			ks = x.String()
		default:
			if e.o.SkipKeys {
				continue
			}
			return &TypeError{Msg: fmt.Sprintf("keys must be str, int, float, bool or None, not %s", typeName(k))}
		}
		if !first {
			e.b.WriteString(e.itemSep)
		}
		first = false
		if e.hasIndent {
			e.newline(depth + 1)
		}
		e.str(ks)
		e.b.WriteString(e.keySep)
		if err := e.value(o.Values[i], depth+1); err != nil {
			return err
		}
	}
	if e.hasIndent {
		e.newline(depth)
	}
	e.b.WriteByte('}')
	return nil
}

func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int32, int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case *Object:
		return "dict"
	case Unsupported:
		return x.TypeName
	}
	return fmt.Sprintf("%T", v)
}

// keyLess is Python's < between two dict keys.
func keyLess(a, b any) (bool, error) {
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			return lessCodePoints(sa, sb), nil
		}
	} else if na, ok := num(a); ok {
		if nb, ok := num(b); ok {
			return na.Cmp(nb) < 0, nil
		}
	}
	return false, &TypeError{Msg: fmt.Sprintf("'<' not supported between instances of '%s' and '%s'", typeName(a), typeName(b))}
}

func lessCodePoints(a, b string) bool {
	// UTF-8 byte order is code point order for valid UTF-8.
	return a < b
}

func num(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewFloat(1), true
		}
		return big.NewFloat(0), true
	case int64:
		return new(big.Float).SetInt64(x), true
	case int:
		return new(big.Float).SetInt64(int64(x)), true
	case *big.Int:
		return new(big.Float).SetInt(x), true
	case float64:
		if math.IsNaN(x) {
			return nil, false
		}
		return big.NewFloat(x), true
	}
	return nil, false
}

func (e *encoder) str(s string) {
	b := &e.b
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(b, `\udc%02x`, s[i])
			i++
			continue
		}
		i += n
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20:
				fmt.Fprintf(b, `\u%04x`, r)
			case !e.o.EnsureASCII || (r >= 0x20 && r < 0x7f):
				b.WriteRune(r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}
