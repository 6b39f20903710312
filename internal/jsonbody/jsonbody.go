// Package jsonbody decodes request bodies of every JSON endpoint the same
// way, so that the HTTP layer (server) and the plain decoders of
// the domain packages (sdk.DecodeBatch, ...) accept and refuse the same
// bodies with the same messages.
//
// A body is accepted only when it is valid UTF-8 (encoding/json would turn
// invalid bytes into U+FFFD and answer for text the client never sent),
// nests at most MaxDepth arrays and objects, holds exactly one JSON value
// (a valid object followed by "]]]" or by a second object is refused:
// json.Decoder.More reports false before "]", so a check on More alone
// lets such bodies through), and that value is an object. Decode then walks
// the object against the Go type it decodes into and names the JSON path of
// the first bad field ("programs[2].budgets.max_steps must be an integer,
// got string"), refuses near-misses of known field names ("top_k" for
// "topk": "did you mean"), and either refuses (Reject) or ignores (Ignore)
// other unknown keys.
//
// Every error is a *rlsearch.FieldError (it wraps rlsearch.ErrBadInput);
// its Field is "" for the body as a whole. The package does not import
// net/http. Its functions are safe for concurrent use. It imports the root
// package (the error kinds) and nothing else of the module: the root is
// the ground under internal/ (see its documentation, Floors).
package jsonbody

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/utf8x"
)

// MaxDepth is the deepest nesting of arrays and objects a body may have.
// No request of this project nests deeper than about 8 (a reward rollout
// with trajectories); encoding/json's own limit is 10,000 levels, each a
// recursive call, so a 20 KB body of "[[[[..." costs real stack and time
// before it fails. 64 leaves room for free-form metadata.
const MaxDepth = 64

// Unknown says what Decode does with a key that names no field and is no
// near-miss of one.
type Unknown int

const (
	// Reject refuses unknown keys (our own endpoints: programs, mutate,
	// hybrid).
	Reject Unknown = iota
	// Ignore lets them pass (Search-R1 contracts, whose clients send
	// extras).
	Ignore
)

// Object checks the framing of body (UTF-8, depth, one value, an object)
// and returns the object's members, in one pass of encoding/json over the
// body.
func Object(body []byte) (map[string]json.RawMessage, error) {
	if err := precheck(body); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, rlsearch.BadField("", "request body must be a JSON object, got %s", Kind(body))
		}
		return nil, syntaxError(err)
	}
	if err := trailing(dec, body); err != nil {
		return nil, err
	}
	if fields == nil {
		return nil, rlsearch.BadField("", "request body must be a JSON object, got null")
	}
	return fields, nil
}

// precheck refuses an empty body, invalid UTF-8 and deep nesting.
func precheck(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return rlsearch.BadField("", "empty request body; want a JSON object")
	}
	if off := utf8x.InvalidOffset(body); off >= 0 {
		return rlsearch.BadField("", "request body is not valid UTF-8: byte 0x%02x at byte offset %d (0-based) starts no valid UTF-8 sequence", body[off], off)
	}
	if off := tooDeep(body, MaxDepth); off >= 0 {
		return rlsearch.BadField("", "invalid JSON: nested deeper than %d arrays and objects at byte offset %d", MaxDepth, off)
	}
	return nil
}

func syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return rlsearch.BadField("", "invalid JSON: unexpected end of input")
	case errors.As(err, &se):
		return rlsearch.BadField("", "invalid JSON at byte offset %d: %v", se.Offset, se)
	}
	return rlsearch.BadField("", "invalid JSON: %v", err)
}

// trailing refuses anything but white space after the value dec decoded.
func trailing(dec *json.Decoder, body []byte) error {
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		off := end
		for off < int64(len(body)) && strings.IndexByte(" \t\r\n", body[off]) >= 0 {
			off++
		}
		return rlsearch.BadField("", "invalid JSON: unexpected data after the top-level object at byte offset %d", off)
	}
	return nil
}

// Decode decodes body, a JSON object, into v (a pointer to a struct),
// checking every field against v's type first so that errors name the
// field's JSON path. unknown decides what happens to keys v has no field
// for; near-misses (see NearMiss) are refused either way.
func Decode(body []byte, v any, unknown Unknown) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("jsonbody: Decode needs a pointer, got %T", v)
	}
	members, err := Object(body)
	if err != nil {
		return err
	}
	if err := checkMembers(members, t.Elem(), "", unknown); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return rlsearch.BadField("", "invalid request: %v", err)
	}
	return nil
}

// DecodeMembers is Decode for a body already split by Object (a
// dispatcher that looks at the keys before it chooses the request type):
// the members are checked against the type of v, a pointer to a struct,
// as Decode checks them (near-misses, unknown keys, the JSON type of each
// field), then each member is decoded into its field in the struct's field
// order. A field type with its own decoder (json.Unmarshaler) gets the raw
// member, JSON null included, and a *rlsearch.FieldError it returns is
// returned as it is; any other decoding error names the member.
func DecodeMembers(members map[string]json.RawMessage, v any, unknown Unknown) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("jsonbody: DecodeMembers needs a pointer to a struct, got %T", v)
	}
	t := rv.Elem().Type()
	if err := checkMembers(members, t, "", unknown); err != nil {
		return err
	}
	fs := fieldsOf(t)
	for _, name := range fs.order {
		raw, ok := members[name]
		if !ok {
			continue
		}
		f := fs.byName[name]
		fv, err := rv.Elem().FieldByIndexErr(f.index)
		if err != nil || f.asString { // behind a nil embedded pointer, or `json:",string"`: encoding/json's own walk
			return decodeAll(members, v)
		}
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			var fe *rlsearch.FieldError
			if errors.As(err, &fe) {
				return err
			}
			return rlsearch.BadField(name, "%s: %v", name, err)
		}
	}
	return nil
}

// decodeAll decodes members into v in one encoding/json call.
func decodeAll(members map[string]json.RawMessage, v any) error {
	body, err := json.Marshal(members)
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		return rlsearch.BadField("", "invalid request: %v", err)
	}
	return nil
}

// Kind names the JSON type of a syntactically valid value by its first
// byte: "object", "list", "string", "bool", "null", "number" ("nothing"
// when raw is blank).
func Kind(raw []byte) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			return "string"
		case '[':
			return "list"
		case '{':
			return "object"
		case 't', 'f':
			return "bool"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "nothing"
}

// NearMiss finds the first key of fields (in sorted order) that is not a
// known field but folds to one: lower-cased, with '_' and '-' dropped, so
// that "top_k", "TopK" and "return-scores" meet the field they were meant
// to be. known maps folded keys to field names (several folded keys may
// name one field: "topk" → "rerank_topk"). ok is false when there is none.
func NearMiss(fields map[string]json.RawMessage, known map[string]string) (key, want string, ok bool) {
	var miss []string
	for k := range fields {
		if name, hit := known[Fold(k)]; hit && k != name {
			miss = append(miss, k)
		}
	}
	if len(miss) == 0 {
		return "", "", false
	}
	slices.Sort(miss)
	return miss[0], known[Fold(miss[0])], true
}

// Fold is the key folding of NearMiss.
func Fold(key string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, key)
}

// NearMissError is NearMiss as a *rlsearch.FieldError naming the key
// (prefix is the path of the object, "" at the top level), or nil.
func NearMissError(prefix string, fields map[string]json.RawMessage, known map[string]string) error {
	key, want, ok := NearMiss(fields, known)
	if !ok {
		return nil
	}
	return rlsearch.BadField(join(prefix, key), "unknown field %q: did you mean %q?", join(prefix, key), want)
}

// tooDeep returns the offset of the first '[' or '{' (outside strings)
// that opens level max+1, or -1.
func tooDeep(b []byte, max int) int {
	depth := 0
	inStr, esc := false, false
	for i, c := range b {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > max {
				return i
			}
		case ']', '}':
			depth--
		}
	}
	return -1
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

var (
	rawType         = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// check walks raw against t; path is raw's JSON path.
func check(raw json.RawMessage, t reflect.Type, path string, unknown Unknown) error {
	kind := Kind(raw)
	if kind == "null" || t == rawType || t.Kind() == reflect.Interface {
		return nil
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textType) || reflect.PointerTo(t).Implements(textType) {
		return nil // its own decoder; json.Unmarshal reports its errors
	}
	name := path
	if name == "" {
		name = "request body"
	}
	wrong := func(want string) error {
		got := kind
		if kind == "number" && strings.Contains(want, "integer") {
			got = strings.TrimSpace(string(raw)) // 1.5, 1e3
		}
		return rlsearch.BadField(path, "%s must be %s, got %s", name, want, got)
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(raw, t.Elem(), path, unknown)
	case reflect.Struct:
		if kind != "object" {
			return wrong("an object")
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return rlsearch.BadField(path, "%s: %v", name, err)
		}
		return checkMembers(members, t, path, unknown)
	case reflect.Map:
		if kind != "object" {
			return wrong("an object")
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return rlsearch.BadField(path, "%s: %v", name, err)
		}
		keys := make([]string, 0, len(members))
		for k := range members {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := check(members[k], t.Elem(), join(path, k), unknown); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			if kind != "string" {
				return wrong("a base64 string")
			}
			return nil
		}
		if kind != "list" {
			return wrong("a list")
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return rlsearch.BadField(path, "%s: %v", name, err)
		}
		if t.Kind() == reflect.Array && len(elems) > t.Len() {
			return rlsearch.BadField(path, "%s must have at most %d elements, got %d", name, t.Len(), len(elems))
		}
		for i, e := range elems {
			if err := check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), unknown); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if kind != "string" {
			return wrong("a string")
		}
	case reflect.Bool:
		if kind != "bool" {
			return wrong("a boolean")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if kind != "number" {
			return wrong("an integer")
		}
		text := strings.TrimSpace(string(raw))
		if _, err := strconv.ParseInt(text, 10, t.Bits()); err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return rlsearch.BadField(path, "%s: %s is out of range", name, text)
			}
			return wrong("an integer")
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if kind != "number" {
			return wrong("an integer")
		}
		text := strings.TrimSpace(string(raw))
		if _, err := strconv.ParseUint(text, 10, t.Bits()); err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return rlsearch.BadField(path, "%s: %s is out of range", name, text)
			}
			return wrong("a non-negative integer")
		}
	case reflect.Float32, reflect.Float64:
		if kind != "number" {
			return wrong("a number")
		}
		text := strings.TrimSpace(string(raw))
		if _, err := strconv.ParseFloat(text, t.Bits()); err != nil {
			return rlsearch.BadField(path, "%s: %s is out of range", name, text)
		}
	}
	return nil
}

// Aliaser is implemented by request types (by value) whose fields have
// well-known other names that must be refused as near-misses: /rerank's
// "topk" for "rerank_topk". FieldAliases maps such a key to the field.
type Aliaser interface {
	FieldAliases() map[string]string
}

// checkMembers walks the members of an object against t. At the top level
// (path "") t may be any type: a non-struct is checked as a whole.
func checkMembers(members map[string]json.RawMessage, t reflect.Type, path string, unknown Unknown) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		raw, err := json.Marshal(members)
		if err != nil {
			return rlsearch.BadField(path, "%v", err)
		}
		return check(raw, t, path, unknown)
	}
	fs := fieldsOf(t)
	known := fs.folded
	if a, ok := reflect.Zero(t).Interface().(Aliaser); ok {
		known = maps.Clone(known)
		for k, v := range a.FieldAliases() {
			known[Fold(k)] = v
		}
	}
	if err := NearMissError(path, members, known); err != nil {
		return err
	}
	keys := make([]string, 0, len(members))
	for k := range members {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		f, ok := fs.byName[k]
		if !ok {
			if unknown == Reject {
				return rlsearch.BadField(join(path, k), "unknown field %q; known fields: %s", join(path, k), strings.Join(fs.names, ", "))
			}
			continue
		}
		if f.asString {
			continue
		}
		if err := check(members[k], f.typ, join(path, k), unknown); err != nil {
			return err
		}
	}
	return nil
}

type field struct {
	typ      reflect.Type
	index    []int // of the struct field (reflect.Value.FieldByIndex)
	asString bool  // `json:",string"`
}

type structFields struct {
	byName map[string]field
	folded map[string]string // Fold(name) → name
	names  []string          // sorted
	order  []string          // in field order, promoted fields after their struct's own
}

var fieldCache sync.Map // reflect.Type → *structFields

// fieldsOf lists the JSON fields of struct type t as encoding/json sees
// them, promoted fields of embedded structs included (an outer field wins
// over a promoted one of the same name).
func fieldsOf(t reflect.Type) *structFields {
	if v, ok := fieldCache.Load(t); ok {
		return v.(*structFields)
	}
	fs := &structFields{byName: map[string]field{}, folded: map[string]string{}}
	var walk func(t reflect.Type, depth int, at []int)
	walk = func(t reflect.Type, depth int, at []int) {
		type embed struct {
			t     reflect.Type
			index []int
		}
		var embedded []embed
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				et := sf.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					embedded = append(embedded, embed{et, append(slices.Clip(at), i)})
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			if _, dup := fs.byName[name]; dup {
				continue
			}
			fs.byName[name] = field{typ: sf.Type, index: append(slices.Clip(at), i), asString: slices.Contains(strings.Split(opts, ","), "string")}
			fs.order = append(fs.order, name)
		}
		if depth < 8 {
			for _, e := range embedded {
				walk(e.t, depth+1, e.index)
			}
		}
	}
	walk(t, 0, nil)
	for name := range fs.byName {
		fs.names = append(fs.names, name)
		fs.folded[Fold(name)] = name
	}
	slices.Sort(fs.names)
	v, _ := fieldCache.LoadOrStore(t, fs)
	return v.(*structFields)
}
