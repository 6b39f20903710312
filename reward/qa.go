package reward

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/rlsearch/rlsearch/internal/answer"
)

// The answer normalisation and matching live in internal/answer (shared
// with package sdk, which must not import reward); these are the public
// names, unchanged in behaviour.

// UnicodeFold is the Unicode step Normalize takes before SQuAD's
// normalize_answer: compatibility normalization (NFKC, which includes
// canonical composition, so "Beyonce"+U+0301 equals "Beyoncé", "ﬁ" equals
// "fi", fullwidth "－５" equals "-5", "…" equals "...", a no-break space
// equals a space), then Unicode dashes, minus signs and quotation marks
// become ASCII "-", "'" and "\"", and invisible format characters (soft
// hyphen, zero-width space, word joiner, BOM) are deleted. ASCII text is
// returned unchanged after one byte scan. Safe for concurrent use.
func UnicodeFold(s string) string { return answer.UnicodeFold(s) }

// Normalize is SQuAD v1.1's normalize_answer (also used by Search-R1, RPL and
// Search-P1 evaluation) after UnicodeFold: lower-case, remove the ASCII
// punctuation of Python's string.punctuation, remove the articles "a",
// "an", "the" as whole words (word characters are letters, numbers and
// "_", as Python's Unicode \w), and collapse runs of whitespace to single
// spaces with none at the ends; non-ASCII results are recomposed (NFC).
//
// Differences from Python's normalize_answer: UnicodeFold (deliberate, see
// the package doc, "Differences from Search-R1"), and strings.ToLower maps
// a few runes (U+0130) to one rune where Python's str.lower yields two.
func Normalize(s string) string { return answer.Normalize(s) }

// Tokens returns the whitespace tokens of Normalize(s).
func Tokens(s string) []string { return answer.Tokens(s) }

// LightTokens is the fallback normalization for a gold answer that
// Normalize maps to "" (golds "A", "The The", "!!!"): UnicodeFold,
// lower-case, split at whitespace, and ASCII punctuation trimmed from both
// ends of each token; empty tokens are dropped, and when none is left the
// untrimmed tokens are returned. Articles are kept.
func LightTokens(s string) []string { return answer.LightTokens(s) }

// GoldEmptyAfterNormalize reports whether some non-blank gold of golds
// normalises to the empty string (it is then matched by LightTokens).
func GoldEmptyAfterNormalize(golds []string) bool { return answer.GoldEmptyAfterNormalize(golds) }

// ExactMatch reports whether Normalize(pred) equals Normalize(g) for some
// gold answer g (SQuAD EM, max over golds). Blank golds never match; a gold
// that normalises to "" matches when LightTokens of both are equal.
func ExactMatch(pred string, golds []string) bool { return answer.ExactMatch(pred, golds) }

// Contains reports whether Normalize(g) is a substring of Normalize(pred) for
// some non-empty normalised gold g: the "answer contained" accuracy of
// Search-R1's subem_check and Search-P1's ACC (paper 001, §4.1). It is a
// plain substring test, as theirs: gold "2009" is contained in "20091". A
// gold that normalises to "" is contained when its LightTokens occur as a
// contiguous run of pred's LightTokens (whole tokens: gold "A" is not
// contained in "banana"). Blank golds never match.
func Contains(pred string, golds []string) bool { return answer.Contains(pred, golds) }

// F1 is SQuAD's token F1 between pred and the best gold: with the multiset
// intersection c of the normalised tokens, precision c/|pred|, recall
// c/|gold|, F1 = 2PR/(P+R); 0 when nothing is shared. It returns 0 for no
// golds. The HotpotQA yes/no special case is not applied. A gold that
// normalises to "" is scored on the LightTokens of both.
func F1(pred string, golds []string) float64 { return answer.F1(pred, golds) }

var answerRE = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)

// ExtractAnswer returns the trimmed content of the last <answer>...</answer>
// block of a response and whether one was found. Search-R1 scores the last
// block too; it sees the prompt as well and so requires two blocks, we are
// given the response only and require one.
func ExtractAnswer(response string) (string, bool) {
	m := answerRE.FindAllStringSubmatch(response, -1)
	if len(m) == 0 {
		return "", false
	}
	return strings.TrimSpace(m[len(m)-1][1]), true
}

// QAScores are the answer metrics of one prediction against its golds.
type QAScores struct {
	Answer   string  `json:"answer"`   // the extracted (or given) answer
	Found    bool    `json:"found"`    // an answer was present
	EM       float64 `json:"em"`       // 0 or 1, ExactMatch
	F1       float64 `json:"f1"`       // [0,1], F1
	Contains float64 `json:"contains"` // 0 or 1, Contains
	// GoldEmptyAfterNormalize: some gold normalises to "" (gold "A",
	// "The The") and was matched by its LightTokens instead; such a gold
	// is ambiguous, check the dataset.
	GoldEmptyAfterNormalize bool `json:"gold_empty_after_normalize,omitempty"`
}

// ScoreQA scores answer against golds. A missing answer (found false)
// scores zero on every metric. GoldEmptyAfterNormalize is set whether or
// not an answer was found.
func ScoreQA(answer string, found bool, golds []string) QAScores {
	return ScoreQAWith(answer, found, golds, NumericSignSQuAD)
}

// ScoreQAWith is ScoreQA comparing numbers as sign says (see NumericSign).
func ScoreQAWith(answer string, found bool, golds []string, sign NumericSign) QAScores {
	if !found {
		return QAScores{Answer: answer, GoldEmptyAfterNormalize: GoldEmptyAfterNormalize(golds)}
	}
	m := compareWith(answer, golds, sign.options())
	return QAScores{Answer: answer, Found: true, EM: b2f(m.EM), F1: m.F1, Contains: b2f(m.Contains), GoldEmptyAfterNormalize: m.GoldEmpty}
}

// compareWith is answer.CompareWith (a variable named "answer" shadows the package in ScoreQAWith).
var compareWith = answer.CompareWith

// NumericSign says how the QA metrics (EM, F1, contains: of the qa and
// rpl rewards and of Search-P1's outcome) treat the sign of numbers: the
// request field "numeric_sign" of every reward endpoint, Config.NumericSign
// for a Scorer's default, `--numeric-sign` of `rlsearch reward` (and
// $RLSEARCH_REWARD_NUMERIC_SIGN for serve).
type NumericSign string

const (
	// NumericSignSQuAD ("squad", also ""; the default) is SQuAD's
	// normalize_answer, which removes "-" and "." with the other
	// punctuation, so gold "-5" matches answer "5" and "-5.0" normalises
	// to "50". Search-R1's qa_em.py does the same: parity.
	NumericSignSQuAD NumericSign = "squad"
	// NumericSignStrict ("strict") keeps a number's sign and value: "-5"
	// does not match "5", "−5" (U+2212) matches "-5", "-5.0" matches
	// "-5", "5.5" does not match "55", and a gold holding a number is
	// contained only as whole tokens ("5" is not in "-5" or "15"). Words
	// compare as with squad. Rules: internal/answer SignStrict.
	NumericSignStrict NumericSign = "strict"
)

// ParseNumericSign returns the NumericSign named s ("" means squad) or
// an error naming the choices.
func ParseNumericSign(s string) (NumericSign, error) {
	switch NumericSign(s) {
	case "", NumericSignSQuAD:
		return NumericSignSQuAD, nil
	case NumericSignStrict:
		return NumericSignStrict, nil
	}
	return "", fmt.Errorf("reward: numeric_sign %q: want %q (SQuAD and Search-R1: the sign of a number is ignored) or %q", s, NumericSignSQuAD, NumericSignStrict)
}

func (n NumericSign) options() answer.Options {
	if n == NumericSignStrict {
		return answer.Options{NumericSign: answer.SignStrict}
	}
	return answer.Options{}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
