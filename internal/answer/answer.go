// Package answer compares a predicted answer with gold answers: SQuAD's
// normalize_answer after a Unicode fold (NFKC, dashes, minus signs and
// quotation marks to ASCII), exact match, token F1 and "answer contained",
// the best over a list of golds. A gold that normalises to "" ("A", "The
// The") is matched by its LightTokens instead. It is the one implementation
// that package reward (QA, RPL, Search-P1 metrics; reward.ExactMatch and
// friends wrap these functions) and package sdk (D_mut answer spans) share,
// so that sdk does not import reward. The deliberate differences from
// Search-R1's qa_em.py are listed in reward's package doc. Pure Go; every
// function is safe for concurrent use.
package answer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// asciiPunct is Python's string.punctuation, the set SQuAD's
// normalize_answer removes.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// foldRunes maps the Unicode dashes, minus signs and quotation marks that
// survive NFKC to their ASCII forms (so that SQuAD's punctuation removal
// treats them alike), and deletes invisible format characters (-1). The set:
// the dashes of Unicode's General Punctuation block (U+2010–U+2015), the
// minus sign U+2212, the hyphen bullet, two- and three-em dashes, the
// modifier minus; single quotes ‘ ’ ‚ ‛ ′ ‵ ‹ ›, double quotes “ ” „ ‟ « »
// ‶ 〝 〞 〟 ⹂; soft hyphen, zero-width space, word joiner and BOM. (Fullwidth
// forms, superscript minus, small dashes and ″ reach these or ASCII
// through NFKC.)
var foldRunes = map[rune]rune{
	'\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-',
	'\u2212': '-', '\u2043': '-', '\u2E3A': '-', '\u2E3B': '-', '\u02D7': '-',
	'\u2018': '\'', '\u2019': '\'', '\u201A': '\'', '\u201B': '\'', '\u2032': '\'', '\u2035': '\'',
	'\u2039': '\'', '\u203A': '\'',
	'\u201C': '"', '\u201D': '"', '\u201E': '"', '\u201F': '"', '\u00AB': '"', '\u00BB': '"',
	'\u2036': '"', '\u301D': '"', '\u301E': '"', '\u301F': '"', '\u2E42': '"',
	'\u00AD': -1, '\u200B': -1, '\u2060': -1, '\uFEFF': -1,
}

// UnicodeFold is the Unicode step Normalize takes before SQuAD's
// normalize_answer: compatibility normalization (NFKC, which includes
// canonical composition, so "Beyonce"+U+0301 equals "Beyoncé", "ﬁ" equals
// "fi", fullwidth "－５" equals "-5", "…" equals "...", a no-break space
// equals a space), then the dashes, minus signs and quotation marks of
// foldRunes become ASCII "-", "'" and "\"", and invisible format
// characters are deleted. ASCII text is returned unchanged after one byte
// scan. Safe for concurrent use.
func UnicodeFold(s string) string {
	if isASCII(s) {
		return s
	}
	s = norm.NFKC.String(strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Map(func(r rune) rune {
		if m, ok := foldRunes[r]; ok {
			return m
		}
		return r
	}, s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Normalize is SQuAD v1.1's normalize_answer (also used by Search-R1, RPL and
// Search-P1 evaluation) after UnicodeFold: lower-case, remove the ASCII
// punctuation of Python's string.punctuation, remove the articles "a",
// "an", "the" as whole words (word characters are letters, numbers and
// "_", as Python's Unicode \w), and collapse runs of whitespace to single
// spaces with none at the ends; non-ASCII results are recomposed (NFC).
//
// Differences from Python's normalize_answer: UnicodeFold (deliberate, see
// package reward's doc, "Differences from Search-R1"), and strings.ToLower maps
// a few runes (U+0130) to one rune where Python's str.lower yields two.
func Normalize(s string) string {
	s = strings.ToLower(UnicodeFold(s))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(asciiPunct, r) {
			continue
		}
		b.WriteRune(r)
	}
	s = strings.Join(strings.Fields(removeArticles(b.String())), " ")
	if !isASCII(s) {
		// Removing punctuation can join combining marks out of canonical
		// order ("å" "“" U+0323); recompose so Normalize is idempotent.
		s = norm.NFC.String(s)
	}
	return s
}

// NumericSign chooses how numbers are normalised.
type NumericSign int

const (
	// SignSQuAD is SQuAD's normalize_answer, which removes "-" and "."
	// with the other punctuation: gold "-5" equals "5", "-5.0" equals
	// "50". Search-R1 (qa_em.py) does the same; the default, for parity.
	SignSQuAD NumericSign = iota
	// SignStrict keeps what a number says. A number (ASCII digits with
	// optional thousands commas and a decimal part, not right after a
	// letter or digit of the normalised text) keeps a "-" right before it
	// as its sign (so "−5", U+2212, after UnicodeFold, and "-5" are
	// negative, while the hyphen of "1990-2000" or "covid-19" stays
	// punctuation and is removed), loses commas (as SQuAD removes them)
	// and keeps its decimal point; "+" is dropped. A token that is then
	// wholly a number is written canonically: trailing fractional zeros
	// dropped and no sign for zero ("-5.0" → "-5", "2.50" → "2.5",
	// "-0" → "0"; integer digits as written, so "007" stays). Contains of
	// a gold with a digit matches whole tokens, so gold "5" is not
	// contained in "-5" or "15". Everything else is as SQuAD's.
	SignStrict
)

// Options tune the comparison; the zero value is SQuAD's (SignSQuAD).
type Options struct {
	NumericSign NumericSign
}

// NormalizeWith is Normalize with options: with SignStrict numbers keep
// their sign and value (see SignStrict).
func NormalizeWith(s string, o Options) string {
	if o.NumericSign != SignStrict {
		return Normalize(s)
	}
	s = strings.ToLower(UnicodeFold(s))
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	// Pass 1: SQuAD's punctuation removal, except the "-" and the decimal
	// point of a number. Whether a number may start depends on the last
	// rune written, not read, so that punctuation removed between a word
	// and "-5" cannot make a sign a second run would not see (NormalizeWith
	// is idempotent).
	last := ' '
	for i := 0; i < len(rs); i++ {
		if n := numberAt(rs, i, isWordRune(last)); n > 0 {
			for _, r := range rs[i : i+n] {
				if r != ',' && r != '+' {
					b.WriteRune(r)
					last = r
				}
			}
			i += n - 1
			continue
		}
		if r := rs[i]; !(r < 0x80 && strings.ContainsRune(asciiPunct, r)) {
			b.WriteRune(r)
			last = r
		}
	}
	// Pass 2: articles, whitespace, and every token that is a number in
	// its canonical form.
	toks := strings.Fields(removeArticles(b.String()))
	for i, t := range toks {
		toks[i] = canonicalNumber(t)
	}
	s = strings.Join(toks, " ")
	if !isASCII(s) {
		s = norm.NFC.String(s)
	}
	return s
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// numberAt returns the length in runes of the number starting at rs[i]
// (SignStrict's: [+-]?D(,?D)*(.D+)? with D a digit), or 0; none starts
// right after a word rune of the output (afterWord).
func numberAt(rs []rune, i int, afterWord bool) int {
	if afterWord {
		return 0
	}
	j := i
	if rs[j] == '-' || rs[j] == '+' {
		j++
	}
	if j >= len(rs) || !isDigit(rs[j]) {
		return 0
	}
	for j < len(rs) && (isDigit(rs[j]) || rs[j] == ',' && j+1 < len(rs) && isDigit(rs[j+1])) {
		j++
	}
	if j+1 < len(rs) && rs[j] == '.' && isDigit(rs[j+1]) {
		j++
		for j < len(rs) && isDigit(rs[j]) {
			j++
		}
	}
	return j - i
}

// canonicalNumber returns t in SignStrict's canonical form when the whole
// token is a number of pass 1 (-?D+(.D+)?): trailing fractional zeros
// dropped, no sign for zero; any other token unchanged.
func canonicalNumber(t string) string {
	num := strings.TrimPrefix(t, "-")
	intPart, frac, dot := strings.Cut(num, ".")
	if intPart == "" || strings.Trim(intPart, "0123456789") != "" || dot && (frac == "" || strings.Trim(frac, "0123456789") != "") {
		return t
	}
	frac = strings.TrimRight(frac, "0")
	c := intPart
	if frac != "" {
		c += "." + frac
	}
	if len(num) < len(t) && strings.Trim(c, "0.") != "" {
		c = "-" + c
	}
	return c
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// removeArticles replaces every whole-word "a", "an", "the" by a space, as
// re.sub(r"\b(a|an|the)\b", " ", s) does on a Python str.
func removeArticles(s string) string {
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s))
	i := 0
	for i < len(rs) {
		if isWordRune(rs[i]) && (i == 0 || !isWordRune(rs[i-1])) {
			j := i
			for j < len(rs) && isWordRune(rs[j]) {
				j++
			}
			switch string(rs[i:j]) {
			case "a", "an", "the":
				b.WriteByte(' ')
			default:
				b.WriteString(string(rs[i:j]))
			}
			i = j
			continue
		}
		b.WriteRune(rs[i])
		i++
	}
	return b.String()
}

// Tokens returns the whitespace tokens of Normalize(s).
func Tokens(s string) []string { return strings.Fields(Normalize(s)) }

// LightTokens is the fallback normalization for a gold answer that
// Normalize maps to "" (golds "A", "The The", "!!!"): UnicodeFold,
// lower-case, split at whitespace, and ASCII punctuation trimmed from both
// ends of each token; empty tokens are dropped, and when none is left the
// untrimmed tokens are returned. Articles are kept.
func LightTokens(s string) []string {
	f := strings.Fields(strings.ToLower(UnicodeFold(s)))
	var out []string
	for _, t := range f {
		if t = strings.Trim(t, asciiPunct); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return f
	}
	return out
}

// goldForm is one gold answer prepared for matching: its Normalize form,
// or, when that is empty for a non-blank gold, its LightTokens (light).
type goldForm struct {
	norm  string
	toks  []string
	light bool
	whole bool // Contains matches whole tokens (SignStrict, a gold with a digit)
}

// prepareGolds drops blank golds (blank: they never match) and picks each gold's
// form; empty reports whether some non-blank gold normalises to "".
func prepareGolds(golds []string, o Options) (forms []goldForm, empty bool) {
	for _, g := range golds {
		if Blank(g) {
			continue
		}
		if n := NormalizeWith(g, o); n != "" {
			forms = append(forms, goldForm{norm: n, toks: strings.Fields(n), whole: o.NumericSign == SignStrict && strings.ContainsAny(n, "0123456789")})
			continue
		}
		empty = true
		forms = append(forms, goldForm{toks: LightTokens(g), light: true})
	}
	return forms, empty
}

// Blank reports whether g is empty after UnicodeFold and trimming spaces:
// such a gold never matches.
func Blank(g string) bool { return strings.TrimSpace(UnicodeFold(g)) == "" }

// GoldEmptyAfterNormalize reports whether some non-blank gold of golds
// normalises to the empty string (it is then matched by LightTokens).
func GoldEmptyAfterNormalize(golds []string) bool {
	for _, g := range golds {
		if !Blank(g) && Normalize(g) == "" {
			return true
		}
	}
	return false
}

// predForms holds a prediction's normal and light forms, the latter made
// only when a light gold needs it.
type predForms struct {
	pred  string
	norm  string
	toks  []string
	light []string
	made  bool
	// count and lightCount are the multisets of toks and light, made on
	// first use, so that F1 against each gold costs O(|gold|) rather than
	// O(|pred|): a long answer against many golds stays linear.
	count, lightCount map[string]int
}

func newPred(pred string, o Options) *predForms {
	n := NormalizeWith(pred, o)
	return &predForms{pred: pred, norm: n, toks: strings.Fields(n)}
}

// containsRun reports whether want occurs as a contiguous run of have.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func (p *predForms) lightToks() []string {
	if !p.made {
		p.light, p.made = LightTokens(p.pred), true
	}
	return p.light
}

func (p *predForms) exact(g goldForm) bool {
	if g.light {
		return slices.Equal(p.lightToks(), g.toks)
	}
	return g.norm == p.norm
}

func (p *predForms) contains(g goldForm) bool {
	switch {
	case g.light:
		return containsRun(p.lightToks(), g.toks)
	case g.whole:
		return containsRun(p.toks, g.toks)
	}
	return strings.Contains(p.norm, g.norm)
}

func (p *predForms) f1(g goldForm) float64 {
	if g.light {
		light := p.lightToks()
		if p.lightCount == nil {
			p.lightCount = countTokens(light)
		}
		return overlapF1(p.lightCount, len(light), g.toks)
	}
	if p.count == nil {
		p.count = countTokens(p.toks)
	}
	return overlapF1(p.count, len(p.toks), g.toks)
}

// ExactMatch reports whether Normalize(pred) equals Normalize(g) for some
// gold answer g (SQuAD EM, max over golds). Blank golds never match; a gold
// that normalises to "" matches when LightTokens of both are equal.
func ExactMatch(pred string, golds []string) bool {
	forms, _ := prepareGolds(golds, Options{})
	p := newPred(pred, Options{})
	for _, g := range forms {
		if p.exact(g) {
			return true
		}
	}
	return false
}

// Contains reports whether Normalize(g) is a substring of Normalize(pred) for
// some non-empty normalised gold g: the "answer contained" accuracy of
// Search-R1's subem_check and Search-P1's ACC (paper 001, §4.1). It is a
// plain substring test, as theirs: gold "2009" is contained in "20091". A
// gold that normalises to "" is contained when its LightTokens occur as a
// contiguous run of pred's LightTokens (whole tokens: gold "A" is not
// contained in "banana"). Blank golds never match.
func Contains(pred string, golds []string) bool {
	forms, _ := prepareGolds(golds, Options{})
	p := newPred(pred, Options{})
	for _, g := range forms {
		if p.contains(g) {
			return true
		}
	}
	return false
}

// F1 is SQuAD's token F1 between pred and the best gold: with the multiset
// intersection c of the normalised tokens, precision c/|pred|, recall
// c/|gold|, F1 = 2PR/(P+R); 0 when nothing is shared. It returns 0 for no
// golds. The HotpotQA yes/no special case is not applied. A gold that
// normalises to "" is scored on the LightTokens of both.
func F1(pred string, golds []string) float64 {
	forms, _ := prepareGolds(golds, Options{})
	p := newPred(pred, Options{})
	best := 0.0
	for _, g := range forms {
		best = max(best, p.f1(g))
	}
	return best
}

func countTokens(toks []string) map[string]int {
	c := make(map[string]int, len(toks))
	for _, t := range toks {
		c[t]++
	}
	return c
}

// overlapF1 is SQuAD's token F1 of a prediction, given as its token
// multiset pred of npred tokens, against gold: the multiset intersection
// is Σ over gold's distinct tokens of min(count in gold, count in pred),
// in O(|gold|).
func overlapF1(pred map[string]int, npred int, gold []string) float64 {
	if npred == 0 || len(gold) == 0 {
		return 0
	}
	same := 0
	for t, n := range countTokens(gold) {
		same += min(n, pred[t])
	}
	if same == 0 {
		return 0
	}
	p := float64(same) / float64(npred)
	r := float64(same) / float64(len(gold))
	return 2 * p * r / (p + r)
}

// Match is the comparison of one prediction with a list of golds.
type Match struct {
	EM       bool    // ExactMatch
	Contains bool    // Contains
	F1       float64 // F1, [0,1]
	// GoldEmpty: some non-blank gold normalises to "" and was matched by
	// its LightTokens (GoldEmptyAfterNormalize).
	GoldEmpty bool
}

// Compare computes ExactMatch, Contains, F1 and GoldEmptyAfterNormalize of
// pred against golds in one pass over the golds (each is normalised once).
func Compare(pred string, golds []string) Match { return CompareWith(pred, golds, Options{}) }

// CompareWith is Compare with options: with SignStrict every metric uses
// NormalizeWith's strict forms and Contains matches a gold holding a
// number as whole tokens.
func CompareWith(pred string, golds []string, o Options) Match {
	forms, empty := prepareGolds(golds, o)
	m := Match{GoldEmpty: empty}
	p := newPred(pred, o)
	for _, g := range forms {
		m.EM = m.EM || p.exact(g)
		m.Contains = m.Contains || p.contains(g)
		m.F1 = max(m.F1, p.f1(g))
	}
	return m
}
