package reward

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Tags recognised in a Search-P1 response (paper 001, App. D.1: the policy
// writes <reasoning>, <tool_call> and <answer>; the environment inserts the
// search results). <plan> is accepted as an explicit plan block, <think> as
// reasoning, and <tool_response>, <information>, <observation>, <result> as
// observation blocks inserted by the rollout loop.
var (
	reasoningTags   = []string{"reasoning", "think"}
	observationTags = []string{"tool_response", "information", "observation", "result"}
	knownTags       = []string{"reasoning", "think", "tool_call", "answer", "plan", "tool_response", "information", "observation", "result"}
)

// Block is one tagged span of a response.
type Block struct {
	Tag     string // tag name, lower-case
	Content string // text between the tags, untrimmed
	Closed  bool   // a matching close tag was found
}

// ParsedResponse is a Search-P1 response split into its tagged blocks (not
// to be confused with sdk.Trajectory, a whole rollout with turns and gold).
// Slices are owned by the caller.
type ParsedResponse struct {
	Blocks       []Block
	Plan         []string // plan steps: the <plan> block, else the list items of the first reasoning block
	Reasoning    []string // trimmed contents of reasoning blocks
	Actions      []string // search queries of the tool calls, in order; invalid calls are left out
	ToolCalls    int      // number of <tool_call> blocks
	BadToolCalls int      // tool calls whose query could not be read
	Observations []string // trimmed contents of observation blocks
	Answers      []string // trimmed contents of answer blocks
	Stray        int      // non-space bytes outside any block
	Unbalanced   int      // open tags without a close and close tags without an open
	Total        int      // non-space bytes of the response
}

// Answer returns the last answer block and whether there is one.
func (t *ParsedResponse) Answer() (string, bool) {
	if len(t.Answers) == 0 {
		return "", false
	}
	return t.Answers[len(t.Answers)-1], true
}

var tagRE = regexp.MustCompile(`(?i)<(/?)(reasoning|think|tool_call|answer|plan|tool_response|information|observation|result)>`)

func countNonSpace(s string) int {
	n := 0
	for _, r := range s {
		if r != ' ' && r != '\n' && r != '\t' && r != '\r' {
			n++
		}
	}
	return n
}

// ParseResponse splits a response into tagged blocks. Blocks do not nest:
// inside an open block every tag other than its own close tag is content
// (observations may quote tags). It never fails; malformed structure is
// counted in Unbalanced and Stray.
func ParseResponse(response string) ParsedResponse {
	var t ParsedResponse
	t.Total = countNonSpace(response)
	locs := tagRE.FindAllStringSubmatchIndex(response, -1)
	pos := 0
	var open string
	openEnd := 0
	for _, l := range locs {
		closing := l[3] > l[2]
		name := strings.ToLower(response[l[4]:l[5]])
		if open == "" {
			if closing {
				t.Unbalanced++
				t.Stray += countNonSpace(response[pos:l[0]])
				pos = l[1]
				continue
			}
			t.Stray += countNonSpace(response[pos:l[0]])
			open, openEnd = name, l[1]
			continue
		}
		if closing && name == open {
			t.Blocks = append(t.Blocks, Block{Tag: open, Content: response[openEnd:l[0]], Closed: true})
			open, pos = "", l[1]
		}
	}
	if open != "" {
		t.Unbalanced++
		t.Blocks = append(t.Blocks, Block{Tag: open, Content: response[openEnd:]})
	} else {
		t.Stray += countNonSpace(response[pos:])
	}
	for _, b := range t.Blocks {
		c := strings.TrimSpace(b.Content)
		switch {
		case b.Tag == "plan":
			if t.Plan == nil {
				t.Plan = planLines(c, false)
			}
		case contains(reasoningTags, b.Tag):
			t.Reasoning = append(t.Reasoning, c)
		case b.Tag == "tool_call":
			t.ToolCalls++
			if q, ok := toolQuery(c); ok {
				t.Actions = append(t.Actions, q...)
			} else {
				t.BadToolCalls++
			}
		case b.Tag == "answer":
			if b.Closed {
				t.Answers = append(t.Answers, c)
			}
		case contains(observationTags, b.Tag):
			t.Observations = append(t.Observations, c)
		}
	}
	if t.Plan == nil && len(t.Reasoning) > 0 {
		t.Plan = planLines(t.Reasoning[0], true)
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var listItemRE = regexp.MustCompile(`(?i)^\s*(?:(?:step\s*)?\d+\s*[.):\-]|[-*•]|step\s*\d+)\s*(.*\S)\s*$`)

// planLines returns the steps of a plan text: its list items ("1. ...",
// "2) ...", "- ...", "* ...", "Step 3: ..."). In a <plan> block (onlyItems
// false) a text without list items gives one step per non-empty line; in a
// reasoning block (onlyItems true) it gives no plan.
func planLines(text string, onlyItems bool) []string {
	var items, lines []string
	for _, ln := range strings.Split(text, "\n") {
		if m := listItemRE.FindStringSubmatch(ln); m != nil && strings.TrimSpace(m[1]) != "" {
			items = append(items, strings.TrimSpace(m[1]))
		}
		if s := strings.TrimSpace(ln); s != "" {
			lines = append(lines, s)
		}
	}
	if len(items) > 0 || onlyItems {
		return items
	}
	return lines
}

// toolQuery reads the search queries of a tool call: JSON
// {"name": ..., "arguments": {"query": str | [str]}} (also "query_list"),
// {"query": str | [str]}, or a plain-text query. A JSON-looking call that
// does not parse, or a call without a non-empty query, is invalid.
func toolQuery(c string) ([]string, bool) {
	if c == "" {
		return nil, false
	}
	if !strings.HasPrefix(c, "{") {
		return []string{c}, true
	}
	var call struct {
		Arguments map[string]json.RawMessage `json:"arguments"`
		Query     json.RawMessage            `json:"query"`
		QueryList json.RawMessage            `json:"query_list"`
	}
	if err := json.Unmarshal([]byte(c), &call); err != nil {
		return nil, false
	}
	var raws []json.RawMessage
	raws = append(raws, call.Query, call.QueryList)
	if call.Arguments != nil {
		raws = append(raws, call.Arguments["query"], call.Arguments["query_list"])
	}
	var out []string
	for _, r := range raws {
		if len(r) == 0 {
			continue
		}
		var s string
		if json.Unmarshal(r, &s) == nil {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
			continue
		}
		var ss []string
		if json.Unmarshal(r, &ss) == nil {
			for _, s := range ss {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out, len(out) > 0
}

// FormatParts are the soft format checks of a Search-P1 response, each in
// [0,1].
type FormatParts struct {
	Answer    float64 `json:"answer"`     // 1: exactly one non-empty answer block, last; 0.5: some answer block
	Reasoning float64 `json:"reasoning"`  // 1: a non-empty reasoning block
	ToolCalls float64 `json:"tool_calls"` // fraction of tool calls whose query reads; 0 with none
	Structure float64 `json:"structure"`  // half for balanced tags, half for the share of text inside blocks
}

// Format weights of the soft ("buffered") format reward R_format. The
// paper (001, §4.3.1) describes a soft format score that gives partial
// credit instead of zero for violations, without constants; these weights
// are chosen here (they sum to 1, the answer weighs most because the
// outcome needs it).
const (
	FormatWeightAnswer    = 0.4
	FormatWeightReasoning = 0.2
	FormatWeightToolCalls = 0.2
	FormatWeightStructure = 0.2
)

// Format returns the soft format reward ∈ [0,1] of t and its parts.
func (t *ParsedResponse) Format() (float64, FormatParts) {
	var p FormatParts
	if len(t.Answers) > 0 {
		p.Answer = 0.5
		last := t.Blocks[len(t.Blocks)-1]
		if len(t.Answers) == 1 && t.Answers[0] != "" && last.Tag == "answer" && last.Closed {
			p.Answer = 1
		}
	}
	for _, r := range t.Reasoning {
		if r != "" {
			p.Reasoning = 1
			break
		}
	}
	if t.ToolCalls > 0 {
		p.ToolCalls = float64(t.ToolCalls-t.BadToolCalls) / float64(t.ToolCalls)
	}
	if t.Unbalanced == 0 && len(t.Blocks) > 0 {
		p.Structure += 0.5
	}
	if t.Total > 0 {
		p.Structure += 0.5 * float64(t.Total-t.Stray) / float64(t.Total)
	}
	total := FormatWeightAnswer*p.Answer + FormatWeightReasoning*p.Reasoning +
		FormatWeightToolCalls*p.ToolCalls + FormatWeightStructure*p.Structure
	return total, p
}
