package hybrid

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// Column types of structured fields, as declared in the SQLite table.
const (
	TypeText    = "TEXT"
	TypeInteger = "INTEGER"
	TypeReal    = "REAL"
)

// Index kinds of text fields.
const (
	IndexBM25 = rlsearch.RetrieverBM25 // package bm25 over the field's text (no model needed)
	IndexE5   = rlsearch.RetrieverE5   // an rlsearch.Encoder (E5 through package embed) + exact ann.Flat search
)

// Roles of structured columns for benchmark generation (Section 3.2 step ii).
const (
	RoleCategorical = "categorical" // grounded by exact equality
	RoleNumeric     = "numeric"     // grounded by a comparator and a threshold
)

// Schema describes a collection: one id column, structured columns the SQL
// may use, text fields and image fields reachable only through placeholders.
//
// Names are case-insensitive in programs (as in SQLite) and must match
// [A-Za-z_][A-Za-z0-9_]*; the id column, columns, text and image fields
// share one namespace. The JSON form is the schema file (see hybrid/schemas).
type Schema struct {
	// Name identifies the collection (in the HTTP API and the CLI).
	Name string `json:"name"`
	// Description is shown to the policy in prompts (optional).
	Description string `json:"description,omitempty"`
	// ID is the id column as programs name it (the paper's product_id /
	// message_id); IDSource is the JSON path of the row id (default "id").
	ID       string `json:"id"`
	IDSource string `json:"id_source,omitempty"`
	// Columns are the structured fields.
	Columns []Column `json:"columns"`
	// Text fields have one vector or BM25 index each.
	Text []TextField `json:"text"`
	// Image fields have user-supplied vectors (no image encoder ships here).
	Image []ImageField `json:"image,omitempty"`
}

// Column is one structured field.
type Column struct {
	Name string `json:"name"`
	// Type is TEXT, INTEGER or REAL.
	Type string `json:"type"`
	// Source is the JSON path of the value (see Extract); default Name.
	Source string `json:"source,omitempty"`
	// Role marks the column for benchmark generation: "categorical",
	// "numeric" or "" (queryable, never generated).
	Role        string `json:"role,omitempty"`
	Description string `json:"description,omitempty"`
}

// TextField is a text field with its own index.
type TextField struct {
	Name string `json:"name"`
	// Sources are JSON paths whose texts are joined with "\n" (default Name).
	Sources []string `json:"sources,omitempty"`
	// Index is "bm25" (default) or "e5".
	Index       string `json:"index,omitempty"`
	Description string `json:"description,omitempty"`
}

// ImageField is an image field; its vectors come from a JSONL file of
// {"id": row id, "vector": [float, ...]} given at build time.
type ImageField struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ErrSchema is wrapped by schema and source-path errors.
var ErrSchema = errors.New("hybrid: bad schema")

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reservedNames are internal column names of the rows table.
var reservedNames = map[string]bool{"_row": true}

// Validate reports the first bad field of s, naming it.
func (s *Schema) Validate() error {
	if s.Name == "" || !nameRE.MatchString(s.Name) {
		return fmt.Errorf("%w: name %q must match %s", ErrSchema, s.Name, nameRE)
	}
	seen := map[string]string{}
	add := func(what, n string) error {
		if !nameRE.MatchString(n) {
			return fmt.Errorf("%w: %s name %q must match %s", ErrSchema, what, n, nameRE)
		}
		k := strings.ToLower(n)
		if reservedNames[k] {
			return fmt.Errorf("%w: %s name %q is reserved", ErrSchema, what, n)
		}
		if prev, ok := seen[k]; ok {
			return fmt.Errorf("%w: %s name %q is already used by a %s", ErrSchema, what, n, prev)
		}
		seen[k] = what
		return nil
	}
	if err := add("id", s.ID); err != nil {
		return err
	}
	if _, err := parsePath(s.idSource()); err != nil {
		return fmt.Errorf("%w: id_source: %v", ErrSchema, err)
	}
	for i, c := range s.Columns {
		if err := add("column", c.Name); err != nil {
			return err
		}
		switch c.Type {
		case TypeText, TypeInteger, TypeReal:
		default:
			return fmt.Errorf("%w: columns[%d].type %q: want TEXT, INTEGER or REAL", ErrSchema, i, c.Type)
		}
		switch c.Role {
		case "", RoleCategorical:
		case RoleNumeric:
			if c.Type == TypeText {
				return fmt.Errorf("%w: columns[%d].role numeric needs an INTEGER or REAL column", ErrSchema, i)
			}
		default:
			return fmt.Errorf("%w: columns[%d].role %q: want categorical, numeric or empty", ErrSchema, i, c.Role)
		}
		if _, err := parsePath(c.source()); err != nil {
			return fmt.Errorf("%w: columns[%d].source: %v", ErrSchema, i, err)
		}
	}
	for i, f := range s.Text {
		if err := add("text field", f.Name); err != nil {
			return err
		}
		switch f.Index {
		case "", IndexBM25, IndexE5:
		default:
			return fmt.Errorf("%w: text[%d].index %q: want bm25 or e5", ErrSchema, i, f.Index)
		}
		for _, p := range f.sources() {
			if _, err := parsePath(p); err != nil {
				return fmt.Errorf("%w: text[%d].sources: %v", ErrSchema, i, err)
			}
		}
	}
	for _, f := range s.Image {
		if err := add("image field", f.Name); err != nil {
			return err
		}
	}
	return nil
}

func (s *Schema) idSource() string {
	if s.IDSource == "" {
		return "id"
	}
	return s.IDSource
}

func (c Column) source() string {
	if c.Source == "" {
		return c.Name
	}
	return c.Source
}

func (f TextField) sources() []string {
	if len(f.Sources) == 0 {
		return []string{f.Name}
	}
	return f.Sources
}

func (f TextField) index() string {
	if f.Index == "" {
		return IndexBM25
	}
	return f.Index
}

// column returns the column named n (case-insensitive).
func (s *Schema) column(n string) (Column, bool) {
	for _, c := range s.Columns {
		if strings.EqualFold(c.Name, n) {
			return c, true
		}
	}
	return Column{}, false
}

func (s *Schema) textField(n string) (int, bool) {
	for i, f := range s.Text {
		if strings.EqualFold(f.Name, n) {
			return i, true
		}
	}
	return -1, false
}

func (s *Schema) imageField(n string) (int, bool) {
	for i, f := range s.Image {
		if strings.EqualFold(f.Name, n) {
			return i, true
		}
	}
	return -1, false
}

// LoadSchema reads and validates a schema file. Unknown JSON fields are an
// error, so a typo in a schema does not silently drop a column.
func LoadSchema(path string) (*Schema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSchema(raw)
}

// ParseSchema decodes and validates a schema from JSON.
func ParseSchema(raw []byte) (*Schema, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s Schema
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSchema, err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// A path selects values from a decoded JSON row:
//
//	field          the value of field
//	field[i]       element i of a list (negative counts from the end)
//	field[]        every element of a list
//	field[].sub    field sub of every element of a list of objects
//	field[#]       the length of a list (an integer)
//
// Scalars are turned into columns as follows: strings stay strings (empty
// string = NULL for TEXT columns), numbers convert to the column type,
// null and missing values are NULL. Several values (field[]) are joined
// with "\n" for text fields and with ", " for TEXT columns.
type pathStep struct {
	field string
	index int // valid when mode == stepIndex
	mode  int
}

const (
	stepField = iota
	stepIndex
	stepAll
	stepLen
)

var pathRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\[(-?[0-9]+|#|)\])?$`)

func parsePath(p string) ([]pathStep, error) {
	if p == "" {
		return nil, errors.New("empty path")
	}
	var steps []pathStep
	for _, part := range strings.Split(p, ".") {
		m := pathRE.FindStringSubmatch(part)
		if m == nil {
			return nil, fmt.Errorf("path %q: bad part %q", p, part)
		}
		steps = append(steps, pathStep{field: m[1], mode: stepField})
		if m[2] != "" {
			switch m[3] {
			case "":
				steps = append(steps, pathStep{mode: stepAll})
			case "#":
				steps = append(steps, pathStep{mode: stepLen})
			default:
				i, err := strconv.Atoi(m[3])
				if err != nil {
					return nil, fmt.Errorf("path %q: %v", p, err)
				}
				steps = append(steps, pathStep{mode: stepIndex, index: i})
			}
		}
	}
	return steps, nil
}

// extract applies a parsed path to a decoded JSON value and returns the
// selected leaf values (nil entries are dropped).
func extract(v any, steps []pathStep) []any {
	cur := []any{v}
	for _, st := range steps {
		var next []any
		for _, x := range cur {
			switch st.mode {
			case stepField:
				if m, ok := x.(map[string]any); ok {
					if y, ok := m[st.field]; ok && y != nil {
						next = append(next, y)
					}
				}
			case stepIndex:
				if l, ok := x.([]any); ok {
					i := st.index
					if i < 0 {
						i += len(l)
					}
					if i >= 0 && i < len(l) && l[i] != nil {
						next = append(next, l[i])
					}
				}
			case stepAll:
				if l, ok := x.([]any); ok {
					for _, y := range l {
						if y != nil {
							next = append(next, y)
						}
					}
				}
			case stepLen:
				if l, ok := x.([]any); ok {
					next = append(next, json.Number(strconv.Itoa(len(l))))
				} else {
					next = append(next, json.Number("0"))
				}
			}
		}
		cur = next
	}
	return cur
}

// scalarText renders a leaf value as text.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}
