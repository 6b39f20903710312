package inspect

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/rlsearch/rlsearch/internal/jsonl"
)

// GoldEntry is the gold of one question of a questions file.
type GoldEntry struct {
	Question      string
	GoldenAnswers []string
	GoldIDs       []string
	GoldTitles    []string
}

// Gold joins rollouts to the gold of a questions JSONL (such as
// wiki_multihop/questions.jsonl: {"id", "question", "golden_answers",
// "gold_passage_ids" | "gold_ids", "gold_titles"}): by id, then by the
// normalised question, then by a question whose text appears in the
// rollout's prompt (the longest first), as mutate_rollouts.py's --gold
// does. A nil *Gold joins nothing. Safe for concurrent use after
// ReadGold.
type Gold struct {
	name  string
	byID  map[string]*GoldEntry
	byQ   map[string]*GoldEntry
	items []*GoldEntry // longest question first
}

// ReadGold reads a questions JSONL; name prefixes errors. Errors name the
// line.
func ReadGold(r io.Reader, name string) (*Gold, error) {
	g := &Gold{name: name, byID: map[string]*GoldEntry{}, byQ: map[string]*GoldEntry{}}
	err := jsonl.NewReader(r, name, 0).Each(func(n int, raw []byte) error {
		var top fields
		if err := json.Unmarshal(raw, &top); err != nil || top == nil {
			return fmt.Errorf("%s line %d: not a JSON object", name, n)
		}
		e := &GoldEntry{}
		var err error
		if v, ok := top["question"]; ok && !isNull(v) {
			if e.Question, ok = str(v); !ok {
				return fmt.Errorf("%s line %d: question must be a string", name, n)
			}
		}
		if e.GoldenAnswers, err = listField(top, "golden_answers"); err == nil {
			if e.GoldIDs, err = listField(top, "gold_ids", "gold_passage_ids"); err == nil {
				e.GoldTitles, err = listField(top, "gold_titles")
			}
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %w", name, n, err)
		}
		if v, _ := top.get("id"); v != nil {
			if id, ok := scalar(v); ok {
				g.byID[id] = e
			}
		}
		if e.Question != "" {
			g.byQ[normQ(e.Question)] = e
			g.items = append(g.items, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(g.items, func(a, b *GoldEntry) int { return len(b.Question) - len(a.Question) })
	return g, nil
}

// Len is the number of questions with an id or a question text.
func (g *Gold) Len() int {
	if g == nil {
		return 0
	}
	return max(len(g.byID), len(g.items))
}

var spaceRE = regexp.MustCompile(`\s+`)

// normQ is mutate_rollouts.py's _norm_q: trimmed, lower-cased, white space
// collapsed.
func normQ(s string) string {
	return spaceRE.ReplaceAllString(strings.ToLower(strings.TrimSpace(s)), " ")
}

// find returns the entry of a rollout and how it was joined ("id",
// "question", "prompt"), or nil.
func (g *Gold) find(id, question, prompt string) (*GoldEntry, string) {
	if g == nil {
		return nil, ""
	}
	if e, ok := g.byID[id]; ok && id != "" {
		return e, "id"
	}
	if e, ok := g.byQ[normQ(question)]; ok && question != "" {
		return e, "question"
	}
	if prompt != "" {
		for _, e := range g.items {
			if strings.Contains(prompt, e.Question) {
				return e, "prompt"
			}
		}
	}
	return nil, ""
}
