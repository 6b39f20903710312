package pyfmt

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// FormatPart is one piece of a str.format template: a literal (Field nil) or
// a replacement field.
type FormatPart struct {
	Literal string
	Field   *Field
}

// Field is one {replacement field}.
type Field struct {
	// Index is the positional argument index (automatic or manual), or -1
	// when the field names a keyword argument in Name.
	Index int
	Name  string
	// Auto is true when the index came from automatic numbering ({} or {:..}).
	Auto bool
	// Chain is the attribute / index chain after the argument name.
	Chain []Accessor
	// ChainErr, when set, is raised after the caller has applied Chain (CPython
	// splits the chain lazily, so an accessor can fail first).
	ChainErr error
	// Conversion is 'r', 's', 'a' or 0. ConvErr, when set, is CPython's
	// "Unknown conversion specifier" ValueError, raised once the object and
	// its chain have been looked up.
	Conversion byte
	ConvErr    error
	// Spec is the format spec after ':', split into literals and nested
	// fields; render the nested fields, concatenate, and format with the
	// result. RawSpec is the unexpanded text.
	Spec    []FormatPart
	RawSpec string
}

// Accessor is one step of a field's chain: .Attr or [Key] / [Int].
type Accessor struct {
	Attr    string // for .name
	IsIndex bool   // for [...]
	Key     string // the text between the brackets
	Int     int    // its value when it is all digits (IsInt)
	IsInt   bool
}

// FormatError is CPython's ValueError for a bad str.format template.
type FormatError struct{ Msg string }

func (e *FormatError) Error() string { return e.Msg }

func ferr(msg string) error { return &FormatError{Msg: msg} }

// ParseFormat parses a str.format template. On error it returns the parts
// before the error too (see the package doc on evaluation order).
func ParseFormat(s string) ([]FormatPart, error) {
	p := &fmtParser{}
	return p.parse(s, 2)
}

type fmtParser struct {
	auto int
	mode int // 0 unknown, 1 auto, 2 manual
}

// parse follows CPython's MarkupIterator: a literal up to '{' or '}', then
// a field whose end parse_field finds.
func (p *fmtParser) parse(s string, depth int) ([]FormatPart, error) {
	if depth <= 0 {
		return nil, ferr("Max string recursion exceeded")
	}
	var parts []FormatPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, FormatPart{Literal: lit.String()})
			lit.Reset()
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		if c != '{' && c != '}' {
			lit.WriteByte(c)
			i++
			continue
		}
		i++
		atEnd := i >= len(s)
		if c == '}' && (atEnd || s[i] != '}') {
			return parts, ferr("Single '}' encountered in format string")
		}
		if atEnd && c == '{' {
			return parts, ferr("Single '{' encountered in format string")
		}
		if s[i] == c {
			lit.WriteByte(c)
			i++
			continue
		}
		flush()
		f, next, err := p.field(s, i, depth)
		if err != nil {
			return parts, err
		}
		parts = append(parts, FormatPart{Field: f})
		i = next
	}
	flush()
	return parts, nil
}

// field is CPython's parse_field from s[i:] (just after '{'); it returns
// the index after the closing '}'.
func (p *fmtParser) field(s string, i, depth int) (*Field, int, error) {
	start := i
	var c byte
	for i < len(s) {
		c = s[i]
		i++
		if c == '{' {
			return nil, 0, ferr("unexpected '{' in field name")
		}
		if c == '[' {
			for i < len(s) && s[i] != ']' {
				i++
			}
			continue
		}
		if c == '}' || c == ':' || c == '!' {
			break
		}
	}
	name := s[start:max(start, i-1)]
	if i >= len(s) && c != '}' && c != ':' && c != '!' {
		name = s[start:i]
	}
	f := &Field{Index: -1}
	var conv rune
	spec := ""
	if c == '!' || c == ':' {
		if c == '!' {
			if i >= len(s) {
				return nil, 0, ferr("end of string while looking for conversion specifier")
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			conv = r
			i += n
			if i < len(s) {
				c2 := s[i]
				i++
				if c2 == '}' {
					goto done
				}
				if c2 != ':' {
					return nil, 0, ferr("expected ':' after conversion specifier")
				}
			}
		}
		ss := i
		count := 1
		for i < len(s) {
			c3 := s[i]
			i++
			if c3 == '{' {
				count++
			} else if c3 == '}' {
				count--
				if count == 0 {
					spec = s[ss : i-1]
					goto done
				}
			}
		}
		return nil, 0, ferr("unmatched '{' in format spec")
	} else if c != '}' {
		return nil, 0, ferr("expected '}' before end of string")
	}
done:
	if err := p.fieldName(name, f); err != nil {
		return nil, 0, err
	}
	if conv != 0 && conv != 'r' && conv != 's' && conv != 'a' {
		if conv > 32 && conv < 127 {
			f.ConvErr = ferr("Unknown conversion specifier " + string(conv))
		} else {
			f.ConvErr = ferr(fmt.Sprintf("Unknown conversion specifier \\x%x", conv))
		}
	} else {
		f.Conversion = byte(conv)
	}
	f.RawSpec = spec
	if spec != "" {
		sp, err := p.parse(spec, depth-1)
		if err != nil {
			return nil, 0, err
		}
		f.Spec = sp
	}
	return f, i, nil
}

func hex2(b byte) string {
	const h = "0123456789abcdef"
	if b < 16 {
		return string(h[b])
	}
	return string([]byte{h[b>>4], h[b&15]})
}

func (p *fmtParser) fieldName(name string, f *Field) error {
	i := 0
	for i < len(name) && name[i] != '.' && name[i] != '[' {
		i++
	}
	first := name[:i]
	if first == "" {
		if p.mode == 2 {
			return ferr("cannot switch from manual field specification to automatic field numbering")
		}
		p.mode = 1
		f.Index = p.auto
		f.Auto = true
		p.auto++
	} else if n, ok, err := atoiPy(first); err != nil {
		return err
	} else if ok {
		if p.mode == 1 {
			return ferr("cannot switch from automatic field numbering to manual field specification")
		}
		p.mode = 2
		f.Index = n
	} else {
		f.Name = first
	}
	rest := name[i:]
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		var a Accessor
		switch c {
		case '.':
			j := strings.IndexAny(rest, ".[")
			if j < 0 {
				j = len(rest)
			}
			a.Attr = rest[:j]
			rest = rest[j:]
			if a.Attr == "" {
				f.ChainErr = ferr("Empty attribute in format string")
				return nil
			}
		case '[':
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				f.ChainErr = ferr("Missing ']' in format string")
				return nil
			}
			a.IsIndex = true
			a.Key = rest[:j]
			rest = rest[j+1:]
			if a.Key == "" {
				f.ChainErr = ferr("Empty attribute in format string")
				return nil
			}
			n, ok, err := atoiPy(a.Key)
			if err != nil {
				f.ChainErr = err
				return nil
			}
			a.Int, a.IsInt = n, ok
		default:
			f.ChainErr = ferr("Only '.' or '[' may follow ']' in format field specifier")
			return nil
		}
		f.Chain = append(f.Chain, a)
	}
	return nil
}

var errTooMany = errors.New("Too many decimal digits in format string")

// atoiPy is CPython's get_integer: all ASCII digits → the value.
func atoiPy(s string) (int, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false, nil
		}
		if v > (math.MaxInt64-9)/10 {
			return 0, false, ferr(errTooMany.Error())
		}
		v = v*10 + int(s[i]-'0')
	}
	return v, true, nil
}
