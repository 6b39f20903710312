package reward

import (
	"regexp"
	"strings"
	"unicode"
)

// asciiPunct is Python's string.punctuation, the set SQuAD's
// normalize_answer removes.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// Normalize is SQuAD v1.1's normalize_answer (also used by Search-R1, RPL and
// Search-P1 evaluation): lower-case, remove the ASCII punctuation of Python's
// string.punctuation, remove the articles "a", "an", "the" as whole words
// (word characters are letters, numbers and "_", as Python's Unicode \w),
// and collapse runs of whitespace to single spaces with none at the ends.
//
// Known difference from Python: strings.ToLower maps a few runes (U+0130)
// to one rune where Python's str.lower yields two.
func Normalize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(asciiPunct, r) {
			continue
		}
		b.WriteRune(r)
	}
	s = removeArticles(b.String())
	return strings.Join(strings.Fields(s), " ")
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

// ExactMatch reports whether Normalize(pred) equals Normalize(g) for some
// gold answer g (SQuAD EM, max over golds). Empty golds never match.
func ExactMatch(pred string, golds []string) bool {
	p := Normalize(pred)
	for _, g := range golds {
		if ng := Normalize(g); ng != "" && ng == p {
			return true
		}
	}
	return false
}

// Contains reports whether Normalize(g) is a substring of Normalize(pred) for
// some non-empty normalised gold g: the "answer contained" accuracy of
// Search-R1's subem_check and Search-P1's ACC (paper 001, §4.1). It is a
// plain substring test, as theirs: gold "2009" is contained in "20091".
func Contains(pred string, golds []string) bool {
	p := Normalize(pred)
	for _, g := range golds {
		if ng := Normalize(g); ng != "" && strings.Contains(p, ng) {
			return true
		}
	}
	return false
}

// F1 is SQuAD's token F1 between pred and the best gold: with the multiset
// intersection c of the normalised tokens, precision c/|pred|, recall
// c/|gold|, F1 = 2PR/(P+R); 0 when nothing is shared. It returns 0 for no
// golds. The HotpotQA yes/no special case is not applied.
func F1(pred string, golds []string) float64 {
	pt := Tokens(pred)
	best := 0.0
	for _, g := range golds {
		if f := tokenF1(pt, Tokens(g)); f > best {
			best = f
		}
	}
	return best
}

func tokenF1(pred, gold []string) float64 {
	if len(pred) == 0 || len(gold) == 0 {
		return 0
	}
	count := make(map[string]int, len(gold))
	for _, t := range gold {
		count[t]++
	}
	same := 0
	for _, t := range pred {
		if count[t] > 0 {
			count[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p := float64(same) / float64(len(pred))
	r := float64(same) / float64(len(gold))
	return 2 * p * r / (p + r)
}

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
}

// ScoreQA scores answer against golds. A missing answer (found false)
// scores zero on every metric.
func ScoreQA(answer string, found bool, golds []string) QAScores {
	s := QAScores{Answer: answer, Found: found}
	if !found {
		return s
	}
	if ExactMatch(answer, golds) {
		s.EM = 1
	}
	if Contains(answer, golds) {
		s.Contains = 1
	}
	s.F1 = F1(answer, golds)
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
