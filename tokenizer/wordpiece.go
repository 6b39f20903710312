package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/rlsearch/rlsearch/internal/utf8x"
)

// Errors returned by LoadWordPiece. Each is wrapped with the file name and
// the offending field, so test with errors.Is.
var (
	// ErrUnsupportedTokenizer means the tokenizer.json uses a component that
	// this WordPiece implementation does not reproduce exactly (another
	// normalizer, pre-tokenizer, model or post-processor, or added tokens
	// with options other than the defaults BERT checkpoints use).
	ErrUnsupportedTokenizer = errors.New("tokenizer: unsupported tokenizer.json")
	// ErrBadTokenizer means the tokenizer.json is malformed or inconsistent
	// (invalid JSON, a special token missing from the vocabulary, ...).
	ErrBadTokenizer = errors.New("tokenizer: malformed tokenizer.json")
)

// WordPiece is a BERT WordPiece tokenizer that reproduces, id for id, what
// Hugging Face tokenizers 0.22 (Rust) computes for a tokenizer.json made of
// a BertNormalizer, a BertPreTokenizer, a WordPiece model and a
// "[CLS] $A [SEP]" post-processor, such as the one of bert-base-uncased,
// all-MiniLM-L6-v2 and the E5 family.
//
// The pipeline, per input text:
//
//  1. Added tokens whose "normalized" is false ([CLS], [SEP], [MASK], [PAD],
//     [UNK]) are found in the raw text (leftmost-longest) and encoded as
//     their own id; the text between them goes through steps 2-5.
//  2. clean_text: drops U+0000, U+FFFD and characters of category Cc, Cf or
//     Co except \t \n \r, and maps whitespace to ' '.
//  3. handle_chinese_chars: surrounds CJK ideographs with spaces.
//  4. strip_accents (null follows lowercase): NFD, then drops category Mn.
//  5. lowercase: Rust char::to_lowercase per character.
//  6. Splits on Unicode White_Space and isolates punctuation (ASCII
//     punctuation and symbols plus Unicode category P).
//  7. Greedy longest-match-first WordPiece with the "##" continuation
//     prefix; a word longer than max_input_chars_per_word characters, or
//     one with a piece not in the vocabulary, becomes a single [UNK].
//
// Character classes follow the tables compiled into tokenizers (the
// unicode_categories crate, Unicode 8, for categories; Rust std for
// whitespace and case), not Go's Unicode 15 tables where the two disagree;
// see the exception tables below and TestWordPieceUnicodeTablesMatchHF.
//
// A WordPiece is immutable after LoadWordPiece and safe for concurrent use.
type WordPiece struct {
	vocab    map[string]int32
	size     int
	unk      int32
	cls, sep int32
	pad      int32
	prefix   string
	maxChars int // max_input_chars_per_word, in characters (Unicode scalars)
	maxPiece int // longest vocabulary entry, in bytes

	cleanText, chinese, strip, lower bool

	// specials are the added tokens matched on the raw text, and
	// specialFirst marks the bytes any of them starts with.
	specials     []addedToken
	specialFirst [256]bool

	props *[0x10000]uint8 // character properties of the BMP, see prop

	pool sync.Pool // *wpState
}

type addedToken struct {
	content string
	id      int32
}

// wpState is the per-call scratch space, recycled through WordPiece.pool.
type wpState struct {
	ids     []int32
	word    []byte // current pre-token, normalized UTF-8
	nchars  int    // characters in word
	key     []byte // lookup buffer: prefix + piece
	pending []rune // non-Mn characters with ccc != 0 awaiting canonical order
	limit   int    // stop once len(ids) reaches limit (0: no limit)
	done    bool

	collect *[]rune // tests only: receives normalized characters instead of pretok
}

// LoadWordPiece reads a Hugging Face tokenizer.json with a BertNormalizer,
// BertPreTokenizer, WordPiece model and a [CLS] $A [SEP] post-processor
// (TemplateProcessing or BertProcessing).
//
// It reads normalizer.clean_text, handle_chinese_chars, strip_accents (null
// follows lowercase) and lowercase; model.vocab, unk_token,
// continuing_subword_prefix and max_input_chars_per_word (defaults "##" and
// 100 as in tokenizers when absent); the post-processor's special tokens;
// and added_tokens. The padding and truncation sections are ignored: Encode
// decides the length itself.
//
// Errors wrap ErrBadTokenizer (unreadable or inconsistent file) or
// ErrUnsupportedTokenizer (another kind of tokenizer), with the path and
// the field.
func LoadWordPiece(path string) (*WordPiece, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("embed: load tokenizer %s: %w", path, err)
	}
	w, err := parseWordPiece(data)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return w, nil
}

func parseWordPiece(data []byte) (*WordPiece, error) {
	tj, err := parseHF(data, ErrBadTokenizer)
	if err != nil {
		return nil, err
	}
	unsupported := hfErrorf(ErrUnsupportedTokenizer)
	bad := hfErrorf(ErrBadTokenizer)

	w := &WordPiece{props: bmpProps()}

	// Normalizer. Defaults are those of tokenizers' BertNormalizer.
	n := tj.Normalizer
	if n == nil || n.Type != "BertNormalizer" {
		typ := "null"
		if n != nil {
			typ = fmt.Sprintf("%q", n.Type)
		}
		return nil, unsupported("normalizer.type is %s, want \"BertNormalizer\"", typ)
	}
	boolOr := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	w.cleanText = boolOr(n.CleanText, true)
	w.chinese = boolOr(n.HandleChineseChars, true)
	w.lower = boolOr(n.Lowercase, true)
	w.strip = boolOr(n.StripAccents, w.lower)

	if tj.PreTokenizer == nil || tj.PreTokenizer.Type != "BertPreTokenizer" {
		typ := "null"
		if tj.PreTokenizer != nil {
			typ = fmt.Sprintf("%q", tj.PreTokenizer.Type)
		}
		return nil, unsupported("pre_tokenizer.type is %s, want \"BertPreTokenizer\"", typ)
	}

	// Model.
	m := tj.Model
	if m == nil {
		return nil, bad("no model")
	}
	if m.Type != "WordPiece" && !(m.Type == "" && m.ContinuingSubwordPrefix != nil) {
		return nil, unsupported("model.type is %q, want \"WordPiece\"", m.Type)
	}
	if len(m.Vocab) == 0 {
		return nil, bad("model.vocab is empty")
	}
	w.vocab = make(map[string]int32, len(m.Vocab))
	maxID := int32(-1)
	for tok, id := range m.Vocab {
		if id < 0 {
			return nil, bad("model.vocab[%q] = %d is negative", tok, id)
		}
		w.vocab[tok] = id
		maxID = max(maxID, id)
		w.maxPiece = max(w.maxPiece, len(tok))
	}
	w.prefix = "##"
	if m.ContinuingSubwordPrefix != nil {
		w.prefix = *m.ContinuingSubwordPrefix
	}
	w.maxChars = 100
	if m.MaxInputCharsPerWord != nil {
		w.maxChars = *m.MaxInputCharsPerWord
	}
	unk, ok := m.Vocab[m.UnkToken]
	if !ok {
		return nil, bad("model.unk_token %q is not in model.vocab", m.UnkToken)
	}
	w.unk = unk

	// Added tokens. tokenizers matches those with normalized=false on the
	// raw text; the options below change how they match, and BERT
	// checkpoints never set them.
	seen := map[string]bool{}
	for i, at := range tj.AddedTokens {
		if at.Content == "" {
			return nil, bad("added_tokens[%d] is empty", i)
		}
		if at.Normalized || at.SingleWord || at.LStrip || at.RStrip {
			return nil, unsupported("added_tokens[%d] %q sets normalized, single_word, lstrip or rstrip", i, at.Content)
		}
		if at.ID < 0 {
			return nil, bad("added_tokens[%d] %q has negative id %d", i, at.Content, at.ID)
		}
		if seen[at.Content] {
			continue
		}
		seen[at.Content] = true
		w.specials = append(w.specials, addedToken{content: at.Content, id: at.ID})
		w.specialFirst[at.Content[0]] = true
		maxID = max(maxID, at.ID)
	}
	// Longest first, so that the first match at a position is the longest.
	slices.SortStableFunc(w.specials, func(a, b addedToken) int { return len(b.content) - len(a.content) })
	w.size = int(maxID) + 1

	lookup := func(tok string) (int32, bool) {
		for _, at := range w.specials {
			if at.content == tok {
				return at.id, true
			}
		}
		id, ok := w.vocab[tok]
		return id, ok
	}

	// Post-processor: [CLS] $A [SEP].
	pp := tj.PostProcessor
	if pp == nil {
		return nil, unsupported("post_processor is null, want [CLS] $A [SEP]")
	}
	switch pp.Type {
	case "TemplateProcessing":
		s := pp.Single
		if len(s) != 3 || s[0].SpecialToken == nil || s[1].Sequence == nil || s[1].Sequence.ID != "A" || s[2].SpecialToken == nil {
			return nil, unsupported("post_processor.single is not [CLS] $A [SEP]")
		}
		one := func(name string) (int32, error) {
			st, ok := pp.SpecialTokens[name]
			if !ok || len(st.IDs) != 1 {
				return 0, bad("post_processor.special_tokens[%q] missing or not a single id", name)
			}
			return st.IDs[0], nil
		}
		var err error
		if w.cls, err = one(s[0].SpecialToken.ID); err != nil {
			return nil, err
		}
		if w.sep, err = one(s[2].SpecialToken.ID); err != nil {
			return nil, err
		}
	case "BertProcessing":
		pair := func(field string, raw []json.RawMessage) (int32, error) {
			var id int32
			if len(raw) != 2 || json.Unmarshal(raw[1], &id) != nil {
				return 0, bad("post_processor.%s is not [token, id]", field)
			}
			return id, nil
		}
		var err error
		if w.cls, err = pair("cls", pp.Cls); err != nil {
			return nil, err
		}
		if w.sep, err = pair("sep", pp.Sep); err != nil {
			return nil, err
		}
	default:
		return nil, unsupported("post_processor.type is %q, want TemplateProcessing or BertProcessing", pp.Type)
	}
	if w.cls < 0 || w.sep < 0 {
		return nil, bad("post_processor special token ids must be >= 0")
	}
	w.size = max(w.size, int(w.cls)+1, int(w.sep)+1)

	padTok := "[PAD]"
	if tj.Padding != nil && tj.Padding.PadToken != "" {
		padTok = tj.Padding.PadToken
	}
	pad, ok := lookup(padTok)
	if !ok {
		return nil, bad("pad token %q is not in the vocabulary", padTok)
	}
	w.pad = pad

	w.pool.New = func() any {
		return &wpState{ids: make([]int32, 0, 256), word: make([]byte, 0, 64), key: make([]byte, 0, 64)}
	}
	return w, nil
}

// PadID returns the id of the padding token ([PAD], or padding.pad_token of
// the file), for callers that build fixed-length batches.
func (w *WordPiece) PadID() int32 { return w.pad }

// VocabSize returns the number of rows the model's embedding table needs:
// one more than the largest id in model.vocab, added_tokens and the
// post-processor (30522 for bert-base-uncased). Every id Encode returns is
// in [0, VocabSize()).
func (w *WordPiece) VocabSize() int { return w.size }

// Encode tokenizes text and returns its token ids as [CLS] ids... [SEP],
// equal to what Hugging Face tokenizers returns from
// encode(text, add_special_tokens=True) with padding disabled.
//
// maxLen > 0 truncates to at most maxLen ids in total, specials included:
// the text's ids are cut to maxLen-2 and [SEP] stays last, as tokenizers'
// truncation (strategy longest_first, direction right) does. maxLen of 1 or
// 2 gives [CLS] [SEP] (tokenizers reports an error there instead). maxLen
// <= 0 means no truncation.
//
// Each maximal ill-formed UTF-8 subsequence reads as one U+FFFD, as with
// Rust's String::from_utf8_lossy and Node's Buffer.toString, and is
// therefore dropped by clean_text. The
// returned slice is newly allocated and owned by the caller. Encode is safe
// for concurrent use; it never panics on any input.
func (w *WordPiece) Encode(text string, maxLen int) []int32 {
	st := w.pool.Get().(*wpState)
	st.ids = append(st.ids[:0], w.cls)
	st.word = st.word[:0]
	st.nchars = 0
	st.pending = st.pending[:0]
	st.done = false
	st.limit = 0
	if maxLen > 0 {
		st.limit = max(maxLen, 2) - 1 // room for [SEP]
		st.done = len(st.ids) >= st.limit
	}

	// Split on the added tokens, leftmost-longest, on the raw text.
	start := 0
	for i := 0; i < len(text) && !st.done; i++ {
		if !w.specialFirst[text[i]] {
			continue
		}
		for _, at := range w.specials {
			if strings.HasPrefix(text[i:], at.content) {
				w.segment(st, text[start:i])
				st.push(at.id)
				i += len(at.content) - 1
				start = i + 1
				break
			}
		}
	}
	if !st.done {
		w.segment(st, text[start:])
	}

	out := make([]int32, len(st.ids)+1)
	copy(out, st.ids)
	out[len(st.ids)] = w.sep
	w.pool.Put(st)
	return out
}

func (st *wpState) push(id int32) {
	if st.done {
		return
	}
	st.ids = append(st.ids, id)
	if st.limit > 0 && len(st.ids) >= st.limit {
		st.done = true
	}
}

// segment runs normalization, pre-tokenization and WordPiece over a piece
// of text that holds no added token.
func (w *WordPiece) segment(st *wpState, s string) {
	for i := 0; i < len(s) && !st.done; {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			// ASCII fast path: no CJK, no decomposition, ccc 0.
			cl := asciiClass[c]
			if w.cleanText && cl&asciiDrop != 0 {
				continue
			}
			if w.cleanText && cl&asciiSpace != 0 {
				c = ' '
			}
			if len(st.pending) > 0 {
				w.flushPending(st)
			}
			if w.lower && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			switch {
			case asciiClass[c]&asciiWS != 0:
				w.endWord(st)
			case asciiClass[c]&asciiPunct != 0:
				w.endWord(st)
				st.word = append(st.word, c)
				st.nchars = 1
				w.endWord(st)
			default:
				st.word = append(st.word, c)
				st.nchars++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			size = utf8x.InvalidLen(s[i:])
		}
		i += size
		p := w.prop(r)
		if w.cleanText {
			if p&pDrop != 0 {
				continue
			}
			if p&pCleanSpace != 0 {
				r, p = ' ', w.props[' ']
			}
		}
		if w.chinese && p&pCJK != 0 {
			sp := w.props[' ']
			w.stripped(st, ' ', sp)
			w.stripped(st, r, p)
			w.stripped(st, ' ', sp)
			continue
		}
		w.stripped(st, r, p)
	}
	w.flushPending(st)
	w.endWord(st)
}

// stripped applies strip_accents (NFD, drop Mn) to r and passes the result
// on. Canonical reordering matters only among the characters that survive
// (non-Mn with a non-zero combining class), which wait in st.pending until
// the next starter.
func (w *WordPiece) stripped(st *wpState, r rune, p uint8) {
	if !w.strip || p&pStripSame != 0 {
		if len(st.pending) > 0 {
			w.flushPending(st)
		}
		w.lowered(st, r, p)
		return
	}
	if out, ok := stripExceptions[r]; ok {
		if len(st.pending) > 0 {
			w.flushPending(st)
		}
		for _, o := range out {
			w.lowered(st, o, w.prop(o))
		}
		return
	}
	// Hangul syllables decompose algorithmically into L V (T) jamo, all
	// starters (Unicode 15 section 3.12: SBase 0xAC00, LBase 0x1100,
	// VBase 0x1161, TBase 0x11A7, VCount 21, TCount 28, SCount 11172).
	if 0xAC00 <= r && r < 0xAC00+11172 {
		if len(st.pending) > 0 {
			w.flushPending(st)
		}
		s := r - 0xAC00
		l, v := 0x1100+s/(21*28), 0x1161+(s%(21*28))/28
		w.lowered(st, l, w.props[l])
		w.lowered(st, v, w.props[v])
		if t := s % 28; t != 0 {
			w.lowered(st, 0x11A7+t, w.props[0x11A7+t])
		}
		return
	}
	var buf [4]byte
	n := utf8.EncodeRune(buf[:], r)
	d := norm.NFD.Properties(buf[:n]).Decomposition()
	if d == nil {
		w.decomposed(st, r, cccOf(r))
		return
	}
	for len(d) > 0 {
		dr, sz := utf8.DecodeRune(d)
		d = d[sz:]
		w.decomposed(st, dr, cccOf(dr))
	}
}

func (w *WordPiece) decomposed(st *wpState, r rune, ccc uint8) {
	if ccc == 0 {
		if len(st.pending) > 0 {
			w.flushPending(st)
		}
		if !isMn(r) {
			w.lowered(st, r, w.prop(r))
		}
		return
	}
	if !isMn(r) {
		st.pending = append(st.pending, r)
	}
}

// flushPending emits the pending non-starters in canonical order (stable by
// combining class).
func (w *WordPiece) flushPending(st *wpState) {
	if len(st.pending) == 0 {
		return
	}
	if len(st.pending) > 1 {
		slices.SortStableFunc(st.pending, func(a, b rune) int { return int(cccOf(a)) - int(cccOf(b)) })
	}
	for _, r := range st.pending {
		w.lowered(st, r, w.prop(r))
	}
	st.pending = st.pending[:0]
}

// lowered applies lowercase (Rust char::to_lowercase) and passes the
// characters on to the pre-tokenizer.
func (w *WordPiece) lowered(st *wpState, r rune, p uint8) {
	if w.lower && p&pLowerSame == 0 {
		if r == 0x130 { // İ: "i\u0307", the only multi-character lowercase
			w.pretok(st, 'i', w.props['i'])
			r = 0x307
		} else {
			r = toLowerHF(r)
		}
		p = w.prop(r)
	}
	w.pretok(st, r, p)
}

// pretok is BertPreTokenizer: split on whitespace, isolate punctuation.
func (w *WordPiece) pretok(st *wpState, r rune, p uint8) {
	if st.collect != nil { // tests: observe the normalizer alone
		*st.collect = append(*st.collect, r)
		return
	}
	switch {
	case p&pSplit != 0:
		w.endWord(st)
	case p&pPunct != 0:
		w.endWord(st)
		st.word = utf8.AppendRune(st.word, r)
		st.nchars = 1
		w.endWord(st)
	default:
		st.word = utf8.AppendRune(st.word, r)
		st.nchars++
	}
}

// endWord runs WordPiece on the current pre-token and appends its ids.
func (w *WordPiece) endWord(st *wpState) {
	word := st.word
	if len(word) == 0 {
		return
	}
	nchars := st.nchars
	st.word = st.word[:0]
	st.nchars = 0
	if st.done {
		return
	}
	if nchars > w.maxChars {
		st.push(w.unk)
		return
	}
	mark := len(st.ids)
	for start := 0; start < len(word); {
		end := len(word)
		limit := w.maxPiece
		if start > 0 {
			limit -= len(w.prefix)
		}
		if end-start > limit {
			end = start + max(limit, 0)
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		found := false
		for end > start {
			var id int32
			var ok bool
			if start == 0 {
				id, ok = w.vocab[string(word[:end])]
			} else {
				st.key = append(append(st.key[:0], w.prefix...), word[start:end]...)
				id, ok = w.vocab[string(st.key)]
			}
			if ok {
				st.ids = append(st.ids, id)
				found = true
				break
			}
			end--
			for end > start && !utf8.RuneStart(word[end]) {
				end--
			}
		}
		if !found {
			st.ids = st.ids[:mark]
			st.push(w.unk)
			return
		}
		start = end
	}
	if st.limit > 0 && len(st.ids) >= st.limit {
		st.ids = st.ids[:st.limit]
		st.done = true
	}
}

// Character property bits, as returned by prop.
const (
	pDrop       = 1 << iota // clean_text drops it: U+FFFD or isOther
	pCleanSpace             // clean_text maps it to ' ': isCleanSpace
	pCJK                    // handle_chinese_chars pads it: isCJK
	pSplit                  // the pre-tokenizer splits on it: isSplitSpace
	pPunct                  // the pre-tokenizer isolates it: isPunct
	pStripSame              // strip_accents keeps it as is, and it is a starter
	pLowerSame              // lowercase keeps it as is
)

// computeProps derives the property bits of r from the class functions.
func computeProps(r rune) uint8 {
	var p uint8
	if r == 0xFFFD || isOther(r) {
		p |= pDrop
	}
	if isCleanSpace(r) {
		p |= pCleanSpace
	}
	if isCJK(r) {
		p |= pCJK
	}
	if isSplitSpace(r) {
		p |= pSplit
	}
	if isPunct(r) {
		p |= pPunct
	}
	if r < 0xC0 { // U+00C0 is the first character with a canonical decomposition
		p |= pStripSame
	} else if _, ok := stripExceptions[r]; !ok && !(0xAC00 <= r && r < 0xAC00+11172) && !isMn(r) && cccOf(r) == 0 &&
		norm.NFD.PropertiesString(string(r)).Decomposition() == nil {
		p |= pStripSame
	}
	if r != 0x130 && toLowerHF(r) == r {
		p |= pLowerSame
	}
	return p
}

// bmpProps is the table of computeProps over the BMP (64 KiB), built once
// on the first LoadWordPiece and read-only afterwards.
var bmpProps = sync.OnceValue(func() *[0x10000]uint8 {
	t := new([0x10000]uint8)
	for r := range rune(0x10000) {
		if r < 0xD800 || r > 0xDFFF {
			t[r] = computeProps(r)
		}
	}
	return t
})

// prop returns the property bits of r: a table lookup in the BMP.
func (w *WordPiece) prop(r rune) uint8 {
	if r < 0x10000 {
		return w.props[r]
	}
	return computeProps(r)
}

// ASCII character classes after clean_text, as tokenizers sees them.
const (
	asciiDrop  = 1 << iota // Cc other than \t \n \r (and NUL): dropped by clean_text
	asciiSpace             // \t \n \r: mapped to ' ' by clean_text
	asciiWS                // Rust char::is_whitespace: splits words
	asciiPunct             // char::is_ascii_punctuation: isolated
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for c := 0; c < utf8.RuneSelf; c++ {
		switch {
		case c == '\t' || c == '\n' || c == '\r':
			t[c] |= asciiSpace
		case c < 0x20 || c == 0x7F:
			t[c] |= asciiDrop
		}
		if c == ' ' || ('\t' <= c && c <= '\r') {
			t[c] |= asciiWS
		}
		if ('!' <= c && c <= '/') || (':' <= c && c <= '@') || ('[' <= c && c <= '`') || ('{' <= c && c <= '~') {
			t[c] |= asciiPunct
		}
	}
	return t
}()

// isOther reports whether clean_text drops r: tokenizers' is_control, i.e.
// unicode_categories' is_other (Cc, Cf, Co at Unicode 8) minus \t \n \r.
func isOther(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if r == 0 {
		return true
	}
	if inRanges(r, otherNotInHF) {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co)
}

// isCleanSpace reports whether clean_text maps r to ' ': \t \n \r and Rust
// char::is_whitespace (checked after isOther, so \v \f U+0085 are dropped).
func isCleanSpace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || isSplitSpace(r)
}

// isSplitSpace is Rust char::is_whitespace (Unicode White_Space).
func isSplitSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiWS != 0
	}
	return unicode.Is(unicode.White_Space, r)
}

// isCJK reports the ranges tokenizers' BertNormalizer pads with spaces
// (tokenizers/src/normalizers/bert.rs is_chinese_char): CJK Unified
// Ideographs and Extension A, B, C, D, E (with F's start as in the source),
// and the two CJK Compatibility Ideographs blocks.
func isCJK(r rune) bool {
	if r < 0x3400 {
		return false
	}
	return r <= 0x4DBF || (0x4E00 <= r && r <= 0x9FFF) || (0xF900 <= r && r <= 0xFAFF) ||
		(0x20000 <= r && r <= 0x2A6DF) || (0x2A700 <= r && r <= 0x2B73F) || (0x2B740 <= r && r <= 0x2B81F) ||
		(0x2B920 <= r && r <= 0x2CEAF) || (0x2F800 <= r && r <= 0x2FA1F)
}

// isMn is unicode_categories' is_mark_nonspacing as tokenizers compiled it
// (Unicode 8): Go's Mn minus the marks assigned since, plus U+1734, which
// was Mn until Unicode 14.
func isMn(r rune) bool {
	if r < 0x300 {
		return false
	}
	if r == 0x1734 {
		return true
	}
	return unicode.Is(unicode.Mn, r) && !inRanges(r, mnNotInHF)
}

// isPunct is tokenizers' is_bert_punc: char::is_ascii_punctuation or
// unicode_categories' is_punctuation (Pc Pd Ps Pe Pi Pf Po at Unicode 8).
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiClass[r]&asciiPunct != 0
	}
	if r == 0x166D || r == 0x111C9 { // Po in Unicode 8, So since
		return true
	}
	return unicode.IsPunct(r) && !inRanges(r, punctNotInHF)
}

// inRanges reports whether r is in one of rs, which are sorted and
// disjoint.
func inRanges(r rune, rs [][2]rune) bool {
	i, j := 0, len(rs)
	for i < j {
		h := int(uint(i+j) >> 1)
		if rs[h][1] < r {
			i = h + 1
		} else {
			j = h
		}
	}
	return i < len(rs) && rs[i][0] <= r
}

// cccOf is the canonical combining class of r in tokenizers' NFD tables:
// Go's, except for the marks those tables predate (class 0 there).
func cccOf(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	var buf [4]byte
	n := utf8.EncodeRune(buf[:], r)
	c := norm.NFD.Properties(buf[:n]).CCC()
	if c != 0 && inRanges(r, cccNotInHF) {
		return 0
	}
	return c
}

// toLowerHF is Rust char::to_lowercase (Unicode 16 in the Rust that built
// tokenizers 0.22) for every r but U+0130, whose full mapping is two
// characters and which callers handle: Go's simple mapping plus the case
// pairs Unicode 16 added.
func toLowerHF(r rune) rune {
	if r >= lowerNotInGo[0].lo {
		for _, x := range lowerNotInGo {
			if x.lo <= r && r <= x.hi {
				return r + x.delta
			}
		}
	}
	return unicode.ToLower(r)
}

// Exception tables: where Go's Unicode 15 tables differ from those compiled
// into tokenizers 0.22. Found by TestWordPieceUnicodeTablesMatchHF, which
// probes every code point through the Rust normalizer and pre-tokenizer
// (node scripts/tokenizer_oracle.js probe).
var (
	// otherNotInHF: Cf characters Go knows and Unicode 8 did not
	// (clean_text keeps them).
	otherNotInHF = [][2]rune{{0x890, 0x891}, {0x8E2, 0x8E2}, {0x110CD, 0x110CD}, {0x13430, 0x1343F}}

	// punctNotInHF: P* characters assigned after Unicode 8 (not isolated).
	// Conversely U+166D and U+111C9 were Po in Unicode 8 (see isPunct).
	punctNotInHF = [][2]rune{{0x61D, 0x61D}, {0x9FD, 0x9FD}, {0xA76, 0xA76}, {0xC77, 0xC77}, {0xC84, 0xC84},
		{0x1B7D, 0x1B7E}, {0x2E43, 0x2E4F}, {0x2E52, 0x2E5D}, {0x10EAD, 0x10EAD}, {0x10F55, 0x10F59}, {0x10F86, 0x10F89},
		{0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145D}, {0x11660, 0x1166C}, {0x116B9, 0x116B9},
		{0x1183B, 0x1183B}, {0x11944, 0x11946}, {0x119E2, 0x119E2}, {0x11A3F, 0x11A46}, {0x11A9A, 0x11A9C}, {0x11A9E, 0x11AA2},
		{0x11B00, 0x11B09}, {0x11C41, 0x11C45}, {0x11C70, 0x11C71}, {0x11EF7, 0x11EF8}, {0x11F43, 0x11F4F}, {0x11FFF, 0x11FFF},
		{0x12FF1, 0x12FF2}, {0x16E97, 0x16E9A}, {0x16FE2, 0x16FE2}, {0x1E95E, 0x1E95F}}

	// mnNotInHF: Mn characters assigned after Unicode 8 (strip_accents
	// keeps them).
	mnNotInHF = [][2]rune{{0x7FD, 0x7FD}, {0x898, 0x89F}, {0x8CA, 0x8E1}, {0x9FE, 0x9FE}, {0xAFA, 0xAFF}, {0xB55, 0xB55},
		{0xC04, 0xC04}, {0xC3C, 0xC3C}, {0xD00, 0xD00}, {0xD3B, 0xD3C}, {0xD81, 0xD81}, {0xEBA, 0xEBA}, {0xECE, 0xECE},
		{0x180F, 0x180F}, {0x1885, 0x1886}, {0x1ABF, 0x1ACE}, {0x1DF6, 0x1DFB}, {0xA82C, 0xA82C}, {0xA8C5, 0xA8C5},
		{0xA8FF, 0xA8FF}, {0xA9BD, 0xA9BD}, {0x10D24, 0x10D27}, {0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50},
		{0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x11073, 0x11074}, {0x110C2, 0x110C2}, {0x111C9, 0x111C9}, {0x111CF, 0x111CF},
		{0x1123E, 0x1123E}, {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x11438, 0x1143F}, {0x11442, 0x11444}, {0x11446, 0x11446},
		{0x1145E, 0x1145E}, {0x1182F, 0x11837}, {0x11839, 0x1183A}, {0x1193B, 0x1193C}, {0x1193E, 0x1193E}, {0x11943, 0x11943},
		{0x119D4, 0x119D7}, {0x119DA, 0x119DB}, {0x119E0, 0x119E0}, {0x11A01, 0x11A0A}, {0x11A33, 0x11A38}, {0x11A3B, 0x11A3E},
		{0x11A47, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B}, {0x11A8A, 0x11A96}, {0x11A98, 0x11A99}, {0x11C30, 0x11C36},
		{0x11C38, 0x11C3D}, {0x11C3F, 0x11C3F}, {0x11C92, 0x11CA7}, {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3}, {0x11CB5, 0x11CB6},
		{0x11D31, 0x11D36}, {0x11D3A, 0x11D3A}, {0x11D3C, 0x11D3D}, {0x11D3F, 0x11D45}, {0x11D47, 0x11D47}, {0x11D90, 0x11D91},
		{0x11D95, 0x11D95}, {0x11D97, 0x11D97}, {0x11EF3, 0x11EF4}, {0x11F00, 0x11F01}, {0x11F36, 0x11F3A}, {0x11F40, 0x11F40},
		{0x11F42, 0x11F42}, {0x13440, 0x13440}, {0x13447, 0x13455}, {0x16F4F, 0x16F4F}, {0x16FE4, 0x16FE4}, {0x1CF00, 0x1CF2D},
		{0x1CF30, 0x1CF46}, {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021}, {0x1E023, 0x1E024}, {0x1E026, 0x1E02A},
		{0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}, {0x1E944, 0x1E94A}}

	// cccNotInHF: characters with a combining class in Go's tables that
	// tokenizers' NFD tables treat as starters (class 0).
	cccNotInHF = [][2]rune{{0x7FD, 0x7FD}, {0x898, 0x89F}, {0x8CA, 0x8D3}, {0x9FE, 0x9FE}, {0xC3C, 0xC3C}, {0xD3B, 0xD3C},
		{0xEBA, 0xEBA}, {0x1715, 0x1715}, {0x1ABF, 0x1ACE}, {0x1DF6, 0x1DFA}, {0xA82C, 0xA82C}, {0x10D24, 0x10D27},
		{0x10EAB, 0x10EAC}, {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F82, 0x10F85}, {0x11070, 0x11070}, {0x1133B, 0x1133B},
		{0x1145E, 0x1145E}, {0x11839, 0x1183A}, {0x1193D, 0x1193E}, {0x11943, 0x11943}, {0x119E0, 0x119E0}, {0x11A34, 0x11A34},
		{0x11A47, 0x11A47}, {0x11A99, 0x11A99}, {0x11D42, 0x11D42}, {0x11D44, 0x11D45}, {0x11D97, 0x11D97}, {0x11F41, 0x11F42},
		{0x16FF0, 0x16FF1}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE}, {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}}

	// stripExceptions: whole strip_accents results that differ for another
	// reason. U+11938 DIVES AKURU VOWEL SIGN O gained its canonical
	// decomposition in Unicode 13.
	stripExceptions = map[rune][]rune{0x11938: {0x11938}}

	// lowerNotInGo: case pairs Unicode 16 added (Rust std knows them, Go's
	// Unicode 15 tables do not), as lo..hi maps to r+delta.
	lowerNotInGo = []struct{ lo, hi, delta rune }{
		{0x1C89, 0x1C89, 1}, {0xA7CB, 0xA7CB, 0x264 - 0xA7CB}, {0xA7CC, 0xA7CC, 1}, {0xA7CE, 0xA7CE, 1}, {0xA7D2, 0xA7D2, 1},
		{0xA7D4, 0xA7D4, 1}, {0xA7DA, 0xA7DA, 1}, {0xA7DC, 0xA7DC, 0x19B - 0xA7DC}, {0x10D50, 0x10D65, 0x20}, {0x16EA0, 0x16EB8, 0x1B}}
)
