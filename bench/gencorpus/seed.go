package gencorpus

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/corpus"
)

// seedModel is the seed corpus turned into sampling tables. It is read-only
// after loadSeed and safe for concurrent use.
type seedModel struct {
	lines [][]byte // real passages re-encoded as {"id","contents"} JSON lines with '\n'

	// The vocabulary, ids in descending order of text frequency (so that the
	// frequent words share a few cache lines): word id's JSON-escaped bytes
	// (no quotes) are arena[wordOff[id]:wordOff[id+1]].
	arena   []byte
	wordOff []uint32
	// Words with ids >= firstRare occur at most once in the seed text (the
	// hapax legomena); rareCore[id-firstRare] is the length of the word's
	// escaped bytes without trailing punctuation (0: no letter or digit).
	firstRare int32
	rareCore  []uint16

	text    []int32 // all text word occurrences, passage after passage
	textOff []int32 // passage i's words are text[textOff[i]:textOff[i+1]]

	title    []int32 // all title word occurrences
	titleOff []int32 // passage i's title words are title[titleOff[i]:titleOff[i+1]]

	// caps are the capitalised text words of each passage (title-like
	// words for generated titles): caps[capsOff[i]:capsOff[i+1]].
	caps    []int32
	capsOff []int32
}

func (m *seedModel) passages() int { return len(m.textOff) - 1 }

// loadSeed reads the first limit passages (all when limit <= 0) of the seed
// corpus at path with the corpus package. It checks that no seed id has the
// form of a generated id "g<row>" with row in [passages, n).
func loadSeed(ctx context.Context, path string, n int) (*seedModel, error) {
	r, err := corpus.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gencorpus: seed corpus: %w", err)
	}
	defer r.Close()
	m := &seedModel{textOff: []int32{0}, titleOff: []int32{0}, capsOff: []int32{0}}
	vocab := make(map[string]int32)
	var words []string
	intern := func(w string) int32 {
		if id, ok := vocab[w]; ok {
			return id
		}
		id := int32(len(words))
		vocab[w] = id
		words = append(words, w)
		return id
	}
	var ids []string
	var line bytes.Buffer
	enc := json.NewEncoder(&line)
	enc.SetEscapeHTML(false)
	for {
		if len(ids)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("gencorpus: seed corpus %s: %w", path, err)
		}
		line.Reset()
		if err := enc.Encode(struct {
			ID       string `json:"id"`
			Contents string `json:"contents"`
		}{p.ID, p.Contents}); err != nil {
			return nil, fmt.Errorf("gencorpus: seed corpus %s line %d: %w", path, p.Line, err)
		}
		m.lines = append(m.lines, bytes.Clone(line.Bytes()))
		ids = append(ids, p.ID)
		for _, w := range strings.Fields(p.Text()) {
			id := intern(w)
			m.text = append(m.text, id)
			if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
				m.caps = append(m.caps, id)
			}
		}
		for _, w := range strings.Fields(p.Title()) {
			m.title = append(m.title, intern(w))
		}
		if len(m.text) > 1<<31-1 || len(m.title) > 1<<31-1 {
			return nil, fmt.Errorf("%w: seed corpus %s has more than 2^31 words", ErrBadConfig, path)
		}
		m.textOff = append(m.textOff, int32(len(m.text)))
		m.titleOff = append(m.titleOff, int32(len(m.title)))
		m.capsOff = append(m.capsOff, int32(len(m.caps)))
		if n > 0 && len(ids) >= n {
			break
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%w: seed corpus %s has no passages", ErrBadConfig, path)
	}
	if err := m.renumber(words); err != nil {
		return nil, fmt.Errorf("%w: seed corpus %s: %v", ErrBadConfig, path, err)
	}
	if len(m.title) == 0 {
		// Titles drawn from an empty table: fall back to text words.
		m.title = m.text
		m.titleOff = m.textOff
	}
	for _, id := range ids {
		if row, ok := generatedRow(id); ok && row >= len(ids) && row < n {
			return nil, fmt.Errorf("%w: seed id %q is also the id of generated row %d", ErrIDCollision, id, row)
		}
	}
	return m, nil
}

// renumber gives the words ids in descending order of text frequency (ties
// by first occurrence) and builds the arena.
func (m *seedModel) renumber(words []string) error {
	freq := make([]int, len(words))
	for _, id := range m.text {
		freq[id]++
	}
	order := make([]int32, len(words))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(freq[b], freq[a]) })
	newID := make([]int32, len(words))
	m.wordOff = make([]uint32, 0, len(words)+1)
	m.wordOff = append(m.wordOff, 0)
	for rank, old := range order {
		newID[old] = int32(rank)
		m.arena = jsonEscape(m.arena, words[old])
		if len(m.arena) > math.MaxUint32 {
			return errors.New("vocabulary larger than 4 GiB")
		}
		m.wordOff = append(m.wordOff, uint32(len(m.arena)))
	}
	m.firstRare = int32(len(words))
	for rank, old := range order {
		if freq[old] <= 1 {
			m.firstRare = int32(rank)
			break
		}
	}
	for id := m.firstRare; id < int32(len(words)); id++ {
		w := m.word(id)
		core := len(w)
		for core > 0 && w[core-1] < utf8.RuneSelf && !isAlnum(w[core-1]) {
			core--
		}
		m.rareCore = append(m.rareCore, uint16(min(core, math.MaxUint16)))
	}
	for _, ids := range [][]int32{m.text, m.title, m.caps} {
		for i, id := range ids {
			ids[i] = newID[id]
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// word returns word id's JSON-escaped bytes.
func (m *seedModel) word(id int32) []byte { return m.arena[m.wordOff[id]:m.wordOff[id+1]] }

// ErrIDCollision is returned when a seed passage id has the form "g<row>" of
// a generated passage id that the output would also contain.
var ErrIDCollision = errors.New("gencorpus: seed id collides with a generated id")

// generatedRow parses "g<row>".
func generatedRow(id string) (int, bool) {
	if len(id) < 2 || id[0] != 'g' || id[1] == '+' || id[1] == '-' {
		return 0, false
	}
	row, err := strconv.Atoi(id[1:])
	return row, err == nil && row >= 0 && strconv.Itoa(row) == id[1:]
}

const hexDigits = "0123456789abcdef"

// jsonEscape appends s escaped for the inside of a JSON string, as
// encoding/json does with SetEscapeHTML(false) (invalid UTF-8 becomes
// U+FFFD; U+2028 and U+2029 are escaped).
func jsonEscape(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\b':
				dst = append(dst, '\\', 'b')
			case c == '\f':
				dst = append(dst, '\\', 'f')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
