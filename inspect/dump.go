package inspect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/sdk"
)

// Formats of a dump line (Rollout.Format): the shapes
// integrations/mutate_rollouts.py reads, plus the RPL reward's rollout.
const (
	// FormatTurns is an rlsearch trajectory (sdk.Trajectory):
	// {"id", "question", "golden_answers", "gold_ids", "turns": [{"role", "text"}]};
	// an observation turn may carry the program result's "printed_ids",
	// "code", "error" and "stats" (sdk.Result).
	FormatTurns = "turns"
	// FormatResults is an RPL reward rollout (reward.RPLRollout): "turns"
	// are results of POST /v1/programs/execute ({"observation",
	// "printed_ids", "code", "stats", optional "program"}) and "response"
	// is the policy's text.
	FormatResults = "results"
	// FormatMessages is a chat transcript: {"messages": [{"role", "content",
	// "tool_calls"}]}; a retrieval_program tool call's "code" argument
	// becomes a <code> block of the assistant turn, a "query" argument a
	// search.
	FormatMessages = "messages"
	// FormatFlat is Search-R1's flat text: {"prompt", "response"}, with
	// observations as <information>…</information> blocks of the response.
	FormatFlat = "flat"
	// FormatVerl is verl's rollout dump (trainer.rollout_data_dir):
	// {"input", "output", "gts", "score", "step"}.
	FormatVerl = "verl"
)

// Turn roles, as sdk names them.
const (
	RolePrompt      = sdk.RolePrompt
	RoleModel       = sdk.RoleModel
	RoleObservation = sdk.RoleObservation
)

// Turn is one turn of a rollout as the dump gives it. Text is exactly the
// dump's text; the other fields are what the dump says about an
// observation turn's program result, when it says it.
type Turn struct {
	Role string `json:"role"` // RolePrompt, RoleModel or RoleObservation
	Text string `json:"text"`
	// PrintedIDs are the ids of the printed documents, in print order
	// (nil when the dump does not give them).
	PrintedIDs []string `json:"printed_ids,omitempty"`
	// Code is the program's outcome code (sdk.ErrorCode) when the dump
	// gives it; Error its message.
	Code  string     `json:"code,omitempty"`
	Error string     `json:"error,omitempty"`
	Stats *sdk.Stats `json:"stats,omitempty"`
	// Searches are search queries of a chat tool call without code
	// ({"query": ...} arguments), which have no tag in Text.
	Searches []string `json:"tool_searches,omitempty"`
}

// Raw is one dump line read into its parts, before analysis.
type Raw struct {
	Line          int      // 1-based line number in the dump
	ID            string   // the line's id, uid or index; "line-N" when it has none
	Format        string   // Format*
	Question      string   // "" when neither the line nor the gold file gives one
	GoldenAnswers []string // gold answers
	GoldIDs       []string // gold support passage ids
	GoldTitles    []string // gold support titles
	GoldSource    string   // where the gold came from: "dump", or the gold file's join ("id", "question", "prompt")
	Turns         []Turn
	// ProRetrieval fields, passed to that reward as they are.
	Collection  string
	GroundTruth []string
	Executed    bool
	Ranked      []string
	ExecError   string
}

// roles maps every role name of the dump formats to a turn role, as
// mutate_rollouts.py's _ROLE and sdk's normRole do.
var roles = map[string]string{
	"system": RolePrompt, "user": RolePrompt, "prompt": RolePrompt,
	"assistant": RoleModel, "model": RoleModel, "policy": RoleModel,
	"tool": RoleObservation, "observation": RoleObservation, "environment": RoleObservation,
}

// ErrBadLine marks a dump line that cannot be read; the message says why.
var ErrBadLine = errors.New("inspect: bad dump line")

func badLine(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadLine, fmt.Sprintf(format, a...))
}

// fields is a JSON object's members.
type fields map[string]json.RawMessage

// get returns the first of keys present and not null.
func (f fields) get(keys ...string) (json.RawMessage, string) {
	for _, k := range keys {
		if v, ok := f[k]; ok && !isNull(v) {
			return v, k
		}
	}
	return nil, ""
}

func isNull(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }

// object decodes v as an object (nil when v is not one).
func object(v json.RawMessage) fields {
	if jsonbody.Kind(v) != "object" {
		return nil
	}
	var f fields
	if json.Unmarshal(v, &f) != nil {
		return nil
	}
	return f
}

// str decodes a JSON string.
func str(v json.RawMessage) (string, bool) {
	var s string
	if jsonbody.Kind(v) != "string" || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// scalar is a string's value or a number's or boolean's JSON text (ids may
// be numbers: str(7) in Python is "7").
func scalar(v json.RawMessage) (string, bool) {
	switch jsonbody.Kind(v) {
	case "string":
		return str(v)
	case "number", "boolean":
		return string(bytes.TrimSpace(v)), true
	}
	return "", false
}

// asList is mutate_rollouts.py's _util.as_list: null → none, a string → one,
// a list → its items as strings (nested lists flattened, nulls skipped,
// numbers as their JSON text). Objects are an error.
func asList(v json.RawMessage, field string) ([]string, error) {
	switch jsonbody.Kind(v) {
	case "", "null":
		return nil, nil
	case "string", "number", "boolean":
		s, _ := scalar(v)
		return []string{s}, nil
	case "list":
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil, badLine("%s: %v", field, err)
		}
		var out []string
		for i, it := range items {
			switch jsonbody.Kind(it) {
			case "null":
			case "list":
				inner, err := asList(it, fmt.Sprintf("%s[%d]", field, i))
				if err != nil {
					return nil, err
				}
				out = append(out, inner...)
			case "object":
				return nil, badLine("%s[%d] must be a string, got object", field, i)
			default:
				s, _ := scalar(it)
				out = append(out, s)
			}
		}
		return out, nil
	}
	return nil, badLine("%s must be a string or a list of strings, got %s", field, jsonbody.Kind(v))
}

// listField reads the first of keys in f as a list of strings.
func listField(f fields, keys ...string) ([]string, error) {
	v, k := f.get(keys...)
	if v == nil {
		return nil, nil
	}
	return asList(v, k)
}

// Search-R1's observation wrapping (also sdk.DefaultObservationTemplate's).
const infoOpen, infoClose = "<information>", "</information>"

// SplitTurns splits a flat rollout (policy text with <information>…</information>
// observations, as Search-R1 and verl's search loops write them) into turns:
// the prompt (when not empty), then model text and observation blocks in
// order. The observation turn holds the whole <information> block; the
// texts concatenate back to prompt + text (mutate_rollouts.py's
// _util.split_turns).
func SplitTurns(text, prompt string) []Turn {
	var turns []Turn
	if prompt != "" {
		turns = append(turns, Turn{Role: RolePrompt, Text: prompt})
	}
	pos := 0
	for {
		i := strings.Index(text[pos:], infoOpen)
		if i < 0 {
			break
		}
		j := strings.Index(text[pos+i+len(infoOpen):], infoClose)
		if j < 0 {
			break
		}
		start, end := pos+i, pos+i+len(infoOpen)+j+len(infoClose)
		if start > pos {
			turns = append(turns, Turn{Role: RoleModel, Text: text[pos:start]})
		}
		turns = append(turns, Turn{Role: RoleObservation, Text: text[start:end]})
		pos = end
	}
	if pos < len(text) {
		turns = append(turns, Turn{Role: RoleModel, Text: text[pos:]})
	}
	return turns
}

// ParseLine reads one dump line (n is its 1-based number) in any of the
// formats (see the Format constants), joining gold from gold when the line
// has none (gold may be nil). Errors wrap ErrBadLine and say what is wrong
// with the line; a line without gold is not an error (its retrieval
// rewards are then not computed).
func ParseLine(line []byte, n int, gold *Gold) (*Raw, error) {
	top, err := jsonbody.Object(line)
	if err != nil {
		msg := strings.Replace(err.Error(), "request body", "the line", 1)
		return nil, fmt.Errorf("%w: %s", ErrBadLine, strings.TrimPrefix(msg, "rlsearch: bad input: "))
	}
	f := fields(top)
	r := &Raw{Line: n}
	extra := object(f["extra_info"])
	var gt json.RawMessage
	if v, _ := f.get("ground_truth"); v != nil {
		gt = v
	} else if rm := object(f["reward_model"]); rm != nil {
		gt, _ = rm.get("ground_truth")
	}
	if gt == nil {
		gt, _ = f.get("gts")
	}
	gtObj := object(gt)

	if v, k := f.get("id", "uid", "index"); v != nil {
		if r.ID, _ = scalar(v); r.ID == "" {
			return nil, badLine("%s must be a string or a number, got %s", k, jsonbody.Kind(v))
		}
	} else if v, k := extra.get("id", "index"); v != nil {
		if r.ID, _ = scalar(v); r.ID == "" {
			return nil, badLine("extra_info.%s must be a string or a number, got %s", k, jsonbody.Kind(v))
		}
	}
	for _, src := range []struct {
		f    fields
		name string
	}{{f, "question"}, {extra, "extra_info.question"}} {
		if v, _ := src.f.get("question"); v != nil {
			q, ok := str(v)
			if !ok {
				return nil, badLine("%s must be a string, got %s", src.name, jsonbody.Kind(v))
			}
			if q != "" {
				r.Question = q
				break
			}
		}
	}

	prompt, err := r.readTurns(f)
	if err != nil {
		return nil, err
	}

	if r.GoldenAnswers, err = listField(f, "golden_answers"); err != nil {
		return nil, err
	}
	if len(r.GoldenAnswers) == 0 && gt != nil {
		if gtObj != nil {
			r.GoldenAnswers, err = listField(gtObj, "target", "golden_answers")
		} else {
			r.GoldenAnswers, err = asList(gt, "ground_truth")
			if f["executed"] != nil || f["ranked"] != nil || f["exec_error"] != nil || f["collection"] != nil {
				r.GroundTruth, r.GoldenAnswers = r.GoldenAnswers, nil // a ProRetrieval rollout's ground-truth id set
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for _, src := range []fields{f, extra, gtObj} {
		if len(r.GoldIDs) == 0 {
			if r.GoldIDs, err = listField(src, "gold_ids", "gold_passage_ids"); err != nil {
				return nil, err
			}
		}
		if len(r.GoldTitles) == 0 {
			if r.GoldTitles, err = listField(src, "gold_titles"); err != nil {
				return nil, err
			}
		}
	}
	if len(r.GoldenAnswers)+len(r.GoldIDs)+len(r.GoldTitles) > 0 {
		r.GoldSource = "dump"
	}
	if g, how := gold.find(r.ID, r.Question, prompt); g != nil {
		filled := false
		fill := func(dst *[]string, src []string) {
			if len(*dst) == 0 && len(src) > 0 {
				*dst, filled = src, true
			}
		}
		fill(&r.GoldenAnswers, g.GoldenAnswers)
		fill(&r.GoldIDs, g.GoldIDs)
		fill(&r.GoldTitles, g.GoldTitles)
		if r.Question == "" && g.Question != "" {
			r.Question, filled = g.Question, true
		}
		if filled {
			src := "questions file (by " + how + ")"
			if r.GoldSource != "" {
				src = r.GoldSource + " + " + src
			}
			r.GoldSource = src
		}
	}
	if r.ID == "" {
		r.ID = fmt.Sprintf("line-%d", n)
	}
	if err := r.readProRetrieval(f); err != nil {
		return nil, err
	}
	return r, nil
}

// readTurns fills r.Turns and r.Format from f and returns the prompt text
// (for the gold join by containment).
func (r *Raw) readTurns(f fields) (prompt string, err error) {
	if v, ok := f["turns"]; ok {
		items, err := list(v, "turns")
		if err != nil {
			return "", err
		}
		results := len(items) > 0
		for _, it := range items {
			if o := object(it); o == nil || o["role"] != nil {
				results = false
			}
		}
		if results {
			return "", r.readResults(f, items)
		}
		r.Format = FormatTurns
		return r.appendTurns(items, func(it json.RawMessage, j int) (Turn, error) { return readTurn(it, fmt.Sprintf("turns[%d]", j)) })
	}
	if v, ok := f["messages"]; ok {
		items, err := list(v, "messages")
		if err != nil {
			return "", err
		}
		r.Format = FormatMessages
		return r.appendTurns(items, readMessage)
	}
	pv, pk := f.get("prompt", "input")
	rv, rk := f.get("response", "output", "solution_str")
	if rv == nil {
		return "", badLine("needs turns, messages, or a response/output string")
	}
	resp, ok := str(rv)
	if !ok {
		return "", badLine("%s must be a string, got %s", rk, jsonbody.Kind(rv))
	}
	if pv != nil {
		if prompt, ok = str(pv); !ok {
			return "", badLine("%s must be a string, got %s", pk, jsonbody.Kind(pv))
		}
	}
	r.Format = FormatFlat
	if rk == "output" || pk == "input" {
		r.Format = FormatVerl
	}
	r.Turns = SplitTurns(resp, prompt)
	return prompt, nil
}

// list decodes v, the member name of a line, as a JSON list.
func list(v json.RawMessage, name string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	if jsonbody.Kind(v) != "list" || json.Unmarshal(v, &items) != nil {
		return nil, badLine("%s must be a list, got %s", name, jsonbody.Kind(v))
	}
	return items, nil
}

// appendTurns reads items into turns with read and returns the text of
// the prompt turns.
func (r *Raw) appendTurns(items []json.RawMessage, read func(json.RawMessage, int) (Turn, error)) (prompt string, err error) {
	for j, it := range items {
		t, err := read(it, j)
		if err != nil {
			return "", err
		}
		if t.Role == RolePrompt {
			prompt += t.Text
		}
		r.Turns = append(r.Turns, t)
	}
	return prompt, nil
}

// stats decodes a program result's "stats" (nil when absent).
func stats(raw json.RawMessage, where string) (*sdk.Stats, error) {
	if isNull(raw) {
		return nil, nil
	}
	var st sdk.Stats
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, badLine("%s.stats: %v", where, typeError(err))
	}
	return &st, nil
}

// turnJSON is a turn of FormatTurns with the program result fields an
// observation turn may carry.
type turnJSON struct {
	Role       *string         `json:"role"`
	Text       *string         `json:"text"`
	PrintedIDs []string        `json:"printed_ids"`
	Code       string          `json:"code"`
	Error      string          `json:"error"`
	Stats      json.RawMessage `json:"stats"`
}

func readTurn(raw json.RawMessage, where string) (Turn, error) {
	if k := jsonbody.Kind(raw); k != "object" {
		return Turn{}, badLine("%s must be an object, got %s", where, k)
	}
	var tj turnJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return Turn{}, badLine("%s: %v", where, typeError(err))
	}
	if tj.Role == nil {
		return Turn{}, badLine("%s has no role", where)
	}
	role, ok := roles[strings.ToLower(strings.TrimSpace(*tj.Role))]
	if !ok {
		return Turn{}, badLine("%s.role %q is not prompt, model or observation (or system, user, assistant, policy, tool, environment)", where, *tj.Role)
	}
	t := Turn{Role: role, PrintedIDs: tj.PrintedIDs, Code: tj.Code, Error: tj.Error}
	if tj.Text != nil {
		t.Text = *tj.Text
	}
	var err error
	t.Stats, err = stats(tj.Stats, where)
	return t, err
}

// typeError shortens encoding/json's type errors to "field: want T, got JSON V".
func typeError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: want %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}

// resultJSON is a program result as a turn of an RPL reward rollout.
type resultJSON struct {
	Program     string          `json:"program"`
	Observation string          `json:"observation"`
	PrintedIDs  []string        `json:"printed_ids"`
	Code        string          `json:"code"`
	Error       string          `json:"error"`
	Stats       json.RawMessage `json:"stats"`
}

// readResults reads an RPL reward rollout: the response split at its
// observation blocks, each block given the result of the same rank; when
// the counts differ, each result becomes a model turn with its program
// and an observation turn, and the response the last model turn.
func (r *Raw) readResults(f fields, items []json.RawMessage) error {
	r.Format = FormatResults
	res := make([]Turn, len(items))
	programs := make([]string, len(items))
	for j, it := range items {
		var rj resultJSON
		if err := json.Unmarshal(it, &rj); err != nil {
			return badLine("turns[%d]: %v", j, typeError(err))
		}
		t := Turn{Role: RoleObservation, Text: rj.Observation, PrintedIDs: rj.PrintedIDs, Code: rj.Code, Error: rj.Error}
		var err error
		if t.Stats, err = stats(rj.Stats, fmt.Sprintf("turns[%d]", j)); err != nil {
			return err
		}
		res[j], programs[j] = t, rj.Program
	}
	resp := ""
	if v, k := f.get("response"); v != nil {
		var ok bool
		if resp, ok = str(v); !ok {
			return badLine("%s must be a string, got %s", k, jsonbody.Kind(v))
		}
	}
	split := SplitTurns(resp, "")
	nobs := 0
	for _, t := range split {
		if t.Role == RoleObservation {
			nobs++
		}
	}
	if nobs == len(res) {
		k := 0
		for i, t := range split {
			if t.Role == RoleObservation {
				o := res[k]
				split[i].PrintedIDs, split[i].Code, split[i].Error, split[i].Stats = o.PrintedIDs, o.Code, o.Error, o.Stats
				k++
			}
		}
		r.Turns = split
		return nil
	}
	for j, t := range res {
		if programs[j] != "" {
			r.Turns = append(r.Turns, Turn{Role: RoleModel, Text: "<code>\n" + strings.Trim(programs[j], "\n") + "\n</code>"})
		}
		r.Turns = append(r.Turns, t)
	}
	if resp != "" {
		r.Turns = append(r.Turns, Turn{Role: RoleModel, Text: resp})
	}
	return nil
}

// messageJSON is one chat message.
type messageJSON struct {
	Role      *string         `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// readMessage turns a chat message into a turn as mutate_rollouts.py's
// _messages_to_turns does: content parts joined, a tool call's "code"
// argument appended as a <code> block, a tool message wrapped in
// <information> unless it already holds one.
func readMessage(raw json.RawMessage, j int) (Turn, error) {
	where := fmt.Sprintf("messages[%d]", j)
	if k := jsonbody.Kind(raw); k != "object" {
		return Turn{}, badLine("%s must be an object, got %s", where, k)
	}
	var m messageJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return Turn{}, badLine("%s: %v", where, typeError(err))
	}
	role := ""
	if m.Role != nil {
		role = roles[*m.Role]
	}
	if role == "" {
		return Turn{}, badLine("%s needs a role in [assistant environment model observation policy prompt system tool user]", where)
	}
	var content string
	switch jsonbody.Kind(m.Content) {
	case "", "null":
	case "string":
		content, _ = str(m.Content)
	case "list": // multimodal content parts
		var parts []json.RawMessage
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			if po := object(p); po != nil {
				if s, ok := str(po["text"]); ok {
					content += s
				}
			}
		}
	default:
		return Turn{}, badLine("%s.content must be a string or a list of parts, got %s", where, jsonbody.Kind(m.Content))
	}
	t := Turn{Role: role}
	if role == RoleModel {
		for _, call := range m.ToolCalls {
			args := call.Function.Arguments
			if s, ok := str(args); ok {
				args = json.RawMessage(s)
			}
			a := object(args)
			if code, ok := str(a["code"]); ok {
				content += "<code>\n" + strings.Trim(code, "\n") + "\n</code>"
			} else if q, ok := str(a["query"]); ok && strings.TrimSpace(q) != "" {
				t.Searches = append(t.Searches, strings.TrimSpace(q))
			}
		}
	}
	if role == RoleObservation && !strings.Contains(content, "<information>") {
		content = "\n<information>\n" + content + "</information>\n"
	}
	t.Text = content
	return t, nil
}

// readProRetrieval reads the execution outcome a ProRetrieval rollout
// carries.
func (r *Raw) readProRetrieval(f fields) error {
	if v, k := f.get("collection"); v != nil {
		s, ok := str(v)
		if !ok {
			return badLine("%s must be a string, got %s", k, jsonbody.Kind(v))
		}
		r.Collection = s
	}
	if v, _ := f.get("executed"); v != nil {
		if err := json.Unmarshal(v, &r.Executed); err != nil {
			return badLine("executed must be a boolean, got %s", jsonbody.Kind(v))
		}
	}
	var err error
	if r.Ranked, err = listField(f, "ranked"); err != nil {
		return err
	}
	if v, _ := f.get("exec_error"); v != nil {
		s, ok := str(v)
		if !ok {
			return badLine("exec_error must be a string, got %s", jsonbody.Kind(v))
		}
		r.ExecError = s
	}
	return nil
}
