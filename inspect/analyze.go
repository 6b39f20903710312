package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
)

// Rollout is one dump line analysed: the dump's turns with what the
// inspector reads from each (programs, searches, answers, printed
// documents, outcome codes), every reward of the reward package with the
// exact input it was scored on, and the failure patterns.
type Rollout struct {
	Index         int      `json:"index"` // 0-based among the dump's readable lines
	Line          int      `json:"line"`  // 1-based line in the dump
	ID            string   `json:"id"`
	Format        string   `json:"format"`
	Question      string   `json:"question"`
	GoldenAnswers []string `json:"golden_answers"`
	GoldIDs       []string `json:"gold_ids"`
	GoldTitles    []string `json:"gold_titles"`
	GoldSource    string   `json:"gold_source"`

	Turns []TurnView `json:"turns"`

	Answer       string `json:"answer"`        // the last <answer> block (reward.ExtractAnswer of the response)
	AnswerFound  bool   `json:"answer_found"`  // some <answer> block was found
	AnswerBlocks int    `json:"answer_blocks"` // <answer> blocks in the policy's turns
	// Calls counts the retrieval calls: each program's stats.retrieval_calls
	// when the dump gives them, else its typed program's calls
	// (sdk.Program.Calls), else its dense(/sparse( call sites; plus one per
	// <search> block or search tool call.
	Calls    int      `json:"calls"`
	Codes    []string `json:"codes"`     // outcome code of each program turn, in order
	Patterns []string `json:"patterns"`  // failure patterns (Pattern*), in the order of Patterns
	GoldSeen string   `json:"gold_seen"` // GoldAll, GoldSome, GoldNone, GoldUnknown (RPL coverage)
	Outcome  string   `json:"outcome"`   // AnswerCorrect (EM 1), AnswerWrong, AnswerNone

	// Rewards maps a reward kind to its result (reward.QAResult,
	// RPLResult, SearchP1Result, ProRetrievalResult), computed by
	// reward.Scorer.ScoreBatch, the code behind POST /v1/rewards/{kind},
	// on RewardInputs[kind], the exact rollout object;
	// RewardErrors[kind] says why a kind was not scored. In JSON the
	// inputs are "reward_inputs" with their long texts (the response, the
	// observations, over 200 bytes) replaced by a note of their length:
	// the page shows those texts once, in the turns.
	Rewards      map[reward.Kind]any             `json:"rewards"`
	RewardInputs map[reward.Kind]json.RawMessage `json:"-"`
	InputsShown  map[reward.Kind]any             `json:"reward_inputs"`
	RewardErrors map[reward.Kind]string          `json:"reward_errors"`
	// Formulas are each reward's formula with this rollout's numbers.
	Formulas map[reward.Kind][]string `json:"formulas"`
	// Values are the numeric components by key (see Components); a key is
	// absent when its reward was not scored or does not apply.
	Values map[string]float64 `json:"values"`

	// Trace is the replay of the rollout's programs against a live index
	// (Tracer), when one was asked for.
	Trace      []ProgramTrace `json:"trace,omitempty"`
	TraceError string         `json:"trace_error,omitempty"`
}

// TurnView is a turn with what the inspector read from it.
type TurnView struct {
	Turn
	// Model turns: the program the runtime would run (sdk.ExtractCode of
	// the turn), its typed form (sdk.Recognize) or why it is not typed,
	// the search queries (<search> blocks, <tool_call> queries, search
	// tool calls) and the <answer> blocks.
	Program    string       `json:"program,omitempty"`
	Typed      *sdk.Program `json:"typed,omitempty"`
	TypedError string       `json:"typed_error,omitempty"`
	Searches   []string     `json:"searches,omitempty"`
	Answers    []string     `json:"answers,omitempty"`
	// Observation turns: the observation inside the <information>
	// wrapping, the documents it shows ("Doc N(Title: T)" lines), the
	// outcome code (the dump's, else the program's error line, else "ok"
	// after a program; "" after a search) and message, the model turn
	// that produced it (-1: none), and V_ret of this turn's evidence (RPL,
	// nil when not scored).
	Observation    string   `json:"-"`
	Docs           []ObsDoc `json:"docs,omitempty"`
	DocsCut        bool     `json:"docs_cut,omitempty"` // more than MaxObsDocs documents: the first are listed
	Outcome        string   `json:"outcome,omitempty"`
	OutcomeMessage string   `json:"outcome_message,omitempty"`
	From           int      `json:"from"`
	VRet           *int     `json:"v_ret,omitempty"`
}

// ObsDoc is a document an observation shows: its number, title, id (from
// the turn's printed_ids, "" when not given) and whether it is gold (by
// id when known, else by title).
type ObsDoc struct {
	N     int    `json:"n"`
	Title string `json:"title"`
	ID    string `json:"id,omitempty"`
	Gold  bool   `json:"gold"`
}

// Failure patterns of a rollout.
const (
	PatternEmptyAnswer    = "empty_answer"     // no <answer> block, or a blank one
	PatternRepeatedAnswer = "repeated_answer"  // two or more <answer> blocks in the policy's text
	PatternBudget         = "budget_exceeded"  // a program stopped on a budget
	PatternProgramError   = "program_error"    // a program failed (syntax, runtime, unsupported, unknown document, conflict)
	PatternNoRetrieval    = "no_retrieval"     // no program and no search
	PatternGoldUnused     = "gold_seen_unused" // every gold passage was printed, the answer is wrong (EM 0)
	PatternGoldNeverSeen  = "gold_never_seen"  // no gold passage was printed
	PatternUnavailable    = "unavailable"      // a program used a route or reranker the server lacks, or the index failed
)

// Patterns lists every failure pattern with its description, in display order.
var Patterns = []struct{ Name, Label string }{
	{PatternEmptyAnswer, "no answer, or a blank one"},
	{PatternRepeatedAnswer, "repeated <answer> blocks"},
	{PatternBudget, "a program hit a budget (budget_exceeded)"},
	{PatternProgramError, "a program failed (syntax, runtime, unsupported, unknown document, conflict)"},
	{PatternUnavailable, "a program needed what the server lacks (unavailable, internal_error)"},
	{PatternNoRetrieval, "no program and no search"},
	{PatternGoldUnused, "every gold passage printed, answer wrong"},
	{PatternGoldNeverSeen, "no gold passage printed"},
}

// Gold coverage classes (Rollout.GoldSeen) and answer classes (Rollout.Outcome).
const (
	GoldAll     = "all"
	GoldSome    = "some"
	GoldNone    = "none"
	GoldUnknown = "unknown" // no gold support ids or titles

	AnswerCorrect = "correct" // EM 1
	AnswerWrong   = "wrong"
	AnswerNone    = "none" // no answer, or a blank one
)

// Analyzer reads dump lines into Rollouts and scores them. Safe for
// concurrent use.
type Analyzer struct {
	cfg    AnalyzerConfig
	scorer *reward.Scorer
}

// AnalyzerConfig configures NewAnalyzer.
type AnalyzerConfig struct {
	// Reward is the scoring configuration (reward.Open's). The inspector
	// scores with the judge it names only when Judge.BaseURL is set and
	// LLMJudge is true; otherwise the judge options are dropped and the
	// lexical judge scores Search-P1, so that opening a 100k-rollout dump
	// makes no LLM request.
	Reward   reward.Options
	LLMJudge bool
	// Kinds are the rewards computed (nil = all of reward.Kinds); each
	// applies only to rollouts with what it needs (answers for qa and
	// search-p1, gold support or answers for rpl, a ground-truth set for
	// proretrieval).
	Kinds []reward.Kind
	// Gold joins rollouts without gold to a questions file (may be nil).
	Gold *Gold
}

// NewAnalyzer opens the scorer of cfg. Errors: reward.Open's.
func NewAnalyzer(cfg AnalyzerConfig) (*Analyzer, error) {
	o := cfg.Reward
	if !cfg.LLMJudge {
		o.Judge, o.JudgeCache = reward.OpenAIConfig{}, ""
	}
	s, _, err := reward.Open(o)
	if err != nil {
		return nil, err
	}
	if cfg.Kinds == nil {
		cfg.Kinds = reward.Kinds
	}
	return &Analyzer{cfg: cfg, scorer: s}, nil
}

// Judge is the name of the Search-P1 judge the analyzer scores with.
func (a *Analyzer) Judge() string { return a.scorer.JudgeName() }

// Gold is the configured questions file join (nil when none).
func (a *Analyzer) Gold() *Gold { return a.cfg.Gold }

var (
	searchRE  = regexp.MustCompile(`(?s)<search>(.*?)</search>`)
	answerRE  = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
	errLineRE = regexp.MustCompile(`^Error \(([a-z_]+)\): (.*)$`)
	callRE    = regexp.MustCompile(`\b(?:dense|sparse)\s*\(`)
)

// Analyze reads line n of a dump and analyses it (index is its rank
// among readable lines). Errors: ErrBadLine (wrapped) for a line that
// cannot be read, ctx's error.
func (a *Analyzer) Analyze(ctx context.Context, line []byte, n, index int) (*Rollout, error) {
	raw, err := ParseLine(line, n, a.cfg.Gold)
	if err != nil {
		return nil, err
	}
	return a.analyzeRaw(ctx, raw, index)
}

func (a *Analyzer) analyzeRaw(ctx context.Context, raw *Raw, index int) (*Rollout, error) {
	r := &Rollout{
		Index: index, Line: raw.Line, ID: raw.ID, Format: raw.Format, Question: raw.Question,
		GoldenAnswers: nonNil(raw.GoldenAnswers), GoldIDs: nonNil(raw.GoldIDs), GoldTitles: nonNil(raw.GoldTitles),
		GoldSource: raw.GoldSource, Codes: []string{}, Patterns: []string{},
		Rewards: map[reward.Kind]any{}, RewardInputs: map[reward.Kind]json.RawMessage{}, InputsShown: map[reward.Kind]any{},
		RewardErrors: map[reward.Kind]string{}, Formulas: map[reward.Kind][]string{}, Values: map[string]float64{},
	}
	gold := newGoldSet(raw.GoldIDs, raw.GoldTitles)
	var response strings.Builder
	last := -1 // the last model turn with a program or a search
	for i, t := range raw.Turns {
		v := TurnView{Turn: t, From: -1}
		switch t.Role {
		case RoleModel:
			readModel(&v)
			r.AnswerBlocks += len(v.Answers)
			if v.Program != "" || len(v.Searches) > 0 {
				last = i
				r.Calls += len(v.Searches)
			}
		case RoleObservation:
			v.From = last
			var prog *TurnView
			if last >= 0 {
				prog = &r.Turns[last]
			}
			readObservation(&v, prog, gold)
			if prog != nil && prog.Program != "" {
				r.Codes = append(r.Codes, v.Outcome)
				r.Calls += programCalls(prog, v.Stats)
			}
			last = -1
		}
		if t.Role != RolePrompt {
			response.WriteString(t.Text)
		}
		r.Turns = append(r.Turns, v)
	}
	// A program whose result the dump does not show still counts its calls.
	if last >= 0 && r.Turns[last].Program != "" {
		r.Calls += programCalls(&r.Turns[last], nil)
	}
	resp := response.String()
	r.Answer, r.AnswerFound = reward.ExtractAnswer(resp)
	if err := a.score(ctx, r, raw, resp); err != nil {
		return nil, err
	}
	r.classify()
	return r, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// readModel reads a model turn's program, searches and answers.
func readModel(v *TurnView) {
	if code, ok := sdk.ExtractCode(v.Text); ok {
		v.Program = code
		if len(code) > sdk.DefaultMaxSourceBytes {
			v.TypedError = fmt.Sprintf("a program of %d bytes: over the runtime's source cap of %d", len(code), sdk.DefaultMaxSourceBytes)
		} else if p, err := sdk.Recognize(code); err == nil {
			v.Typed = &p
		} else {
			v.TypedError = err.Error()
		}
	}
	for _, m := range searchRE.FindAllStringSubmatch(v.Text, -1) {
		if q := strings.TrimSpace(m[1]); q != "" {
			v.Searches = append(v.Searches, q)
		}
	}
	if strings.Contains(v.Text, "<tool_call>") {
		v.Searches = append(v.Searches, reward.ParseResponse(v.Text).Actions...)
	}
	v.Searches = append(v.Searches, v.Turn.Searches...)
	for _, m := range answerRE.FindAllStringSubmatch(v.Text, -1) {
		v.Answers = append(v.Answers, strings.TrimSpace(m[1]))
	}
}

// observationText is the text inside an observation turn's first
// <information> block (without the newline sdk's template puts after the
// tag), or the whole text when it has none.
func observationText(s string) string {
	if i := strings.Index(s, infoOpen); i >= 0 {
		if j := strings.Index(s[i+len(infoOpen):], infoClose); j >= 0 {
			return strings.TrimPrefix(s[i+len(infoOpen):i+len(infoOpen)+j], "\n")
		}
	}
	return s
}

// MaxObsDocs bounds the documents listed per observation (the runtime
// prints at most 20, sdk.DefaultMaxPrintedDocs; more comes from another
// format or a hostile dump).
const MaxObsDocs = 100

// obsDoc is a "Doc N(Title: T) text" line of an observation: N, the title
// up to the first ") " (or ")" at the line's end), and the line after
// "(Title: " (where a gold title with ") " inside can be recognised).
type obsDoc struct {
	n           int
	title, rest string
}

// parseDocs reads the document lines of an observation in the runtime's
// default format (sdk.DefaultDocFormat, Search-R1's), at most max; cut
// says there were more. One pass of IndexByte over the text.
func parseDocs(obs string, max int) (docs []obsDoc, cut bool) {
	for pos := 0; pos < len(obs); {
		end := strings.IndexByte(obs[pos:], '\n')
		if end < 0 {
			end = len(obs)
		} else {
			end += pos
		}
		line := obs[pos:end]
		pos = end + 1
		rest, ok := strings.CutPrefix(line, "Doc ")
		if !ok {
			continue
		}
		d := 0
		for d < len(rest) && rest[d] >= '0' && rest[d] <= '9' && d < 9 {
			d++
		}
		after, ok := strings.CutPrefix(rest[d:], "(Title: ")
		if d == 0 || !ok {
			continue
		}
		title := after
		if i := strings.Index(after, ") "); i >= 0 {
			title = after[:i]
		} else if strings.HasSuffix(after, ")") {
			title = after[:len(after)-1]
		} else {
			continue
		}
		if len(docs) == max {
			return docs, true
		}
		n, _ := strconv.Atoi(rest[:d])
		docs = append(docs, obsDoc{n, title, after[:min(len(after), 512)]})
	}
	return docs, false
}

// lastErrorLine finds the program's error line (sdk.DefaultErrorFormat,
// "Error (code): message"), which the runtime appends last: the code and
// message of the last such line, or ok false.
func lastErrorLine(obs string) (code, msg string, ok bool) {
	for end := len(obs); end > 0; {
		i := strings.LastIndex(obs[:end], "Error (")
		if i < 0 {
			return "", "", false
		}
		if i == 0 || obs[i-1] == '\n' {
			line := obs[i:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			if m := errLineRE.FindStringSubmatch(line); m != nil {
				return m[1], m[2], true
			}
		}
		end = i
	}
	return "", "", false
}

// readObservation reads an observation turn: its documents, and its
// outcome code when prog (the model turn before it, may be nil) ran a
// program.
func readObservation(v *TurnView, prog *TurnView, gold goldSet) {
	v.Observation = observationText(v.Text)
	docs, cut := parseDocs(v.Observation, MaxObsDocs)
	v.DocsCut = cut
	for _, od := range docs {
		d := ObsDoc{N: od.n, Title: od.title}
		if od.n >= 1 && od.n <= len(v.PrintedIDs) {
			d.ID = v.PrintedIDs[od.n-1]
		}
		d.Gold = gold.has(d.ID, d.Title, od.rest)
		v.Docs = append(v.Docs, d)
	}
	switch {
	case v.Code != "":
		v.Outcome, v.OutcomeMessage = v.Code, v.Error
	case prog != nil && prog.Program != "":
		v.Outcome = string(sdk.CodeOK)
		if code, msg, ok := lastErrorLine(v.Observation); ok {
			v.Outcome, v.OutcomeMessage = code, msg
		}
	}
}

// programCalls is a program turn's retrieval calls (see Rollout.Calls).
func programCalls(prog *TurnView, st *sdk.Stats) int {
	switch {
	case st != nil:
		return st.RetrievalCalls
	case prog.Typed != nil:
		return prog.Typed.Calls()
	}
	return len(callRE.FindAllStringIndex(prog.Program, -1))
}

// goldSet is a rollout's gold support for marking documents.
type goldSet struct {
	ids    map[string]bool
	titles []string // normalised
	raw    []string // as given
}

func newGoldSet(ids, titles []string) goldSet {
	g := goldSet{ids: map[string]bool{}}
	for _, id := range ids {
		if id != "" {
			g.ids[id] = true
		}
	}
	for _, t := range titles {
		if nt := reward.Normalize(t); nt != "" {
			g.titles, g.raw = append(g.titles, nt), append(g.raw, t)
		}
	}
	return g
}

// has reports whether a document is gold: by id when the id is known and
// the gold has ids, else by title (the parsed title, or a gold title
// followed by ")" at the start of the title text rest).
func (g goldSet) has(id, title, rest string) bool {
	if id != "" && len(g.ids) > 0 {
		return g.ids[id]
	}
	nt := reward.Normalize(title)
	for i, t := range g.titles {
		if t == nt || strings.HasPrefix(rest, g.raw[i]+")") {
			return true
		}
	}
	return false
}

// qaInput is a QA reward input: reward.QARollout drops an empty
// "response" (omitempty), which the endpoint refuses as a missing key,
// while a policy that wrote nothing must score 0.
type qaInput struct {
	ID            string   `json:"id"`
	GoldenAnswers []string `json:"golden_answers"`
	Response      string   `json:"response"`
}

// rewardInputs builds the input of each applicable kind, as POST
// /v1/rewards/{kind} takes it; rplAt maps the RPL input's turns to r.Turns.
func (r *Rollout) rewardInputs(raw *Raw, resp string) (in map[reward.Kind]any, rplAt []int) {
	in = map[reward.Kind]any{}
	if len(raw.GroundTruth) > 0 {
		in[reward.KindProRetrieval] = reward.ProRetrievalRollout{ID: r.ID, Collection: raw.Collection, Response: resp,
			GroundTruth: raw.GroundTruth, Executed: raw.Executed, Ranked: raw.Ranked, ExecError: raw.ExecError}
		return in, nil
	}
	in[reward.KindQA] = qaInput{ID: r.ID, GoldenAnswers: r.GoldenAnswers, Response: resp}
	in[reward.KindSearchP1] = reward.SearchP1Rollout{ID: r.ID, QID: r.ID, Question: r.Question, GoldenAnswers: r.GoldenAnswers, Response: resp}
	rp := reward.RPLRollout{ID: r.ID, GoldenAnswers: r.GoldenAnswers, GoldIDs: raw.GoldIDs, GoldTitles: raw.GoldTitles, Response: resp, Turns: []reward.RPLTurn{}}
	for i, t := range r.Turns {
		if t.Role != RoleObservation {
			continue
		}
		ti := reward.RPLTurn{PrintedIDs: t.PrintedIDs, Observation: t.Observation}
		if t.From >= 0 {
			ti.Program = r.Turns[t.From].Program
		}
		if st := t.Stats; st != nil {
			ti.RetrievalCalls, ti.Candidates, ti.PrintedTokens = st.RetrievalCalls, st.Candidates, &st.PrintedTokens
		}
		rp.Turns = append(rp.Turns, ti)
		rplAt = append(rplAt, i)
	}
	in[reward.KindRPL] = rp
	return in, rplAt
}

// shownInput is a reward input for the page: the response and the turns'
// observations, when longer than 200 bytes, replaced by a note of their
// length (the page shows them in the turns), so that a rollout's JSON
// holds its text once rather than once per reward.
func shownInput(b json.RawMessage) any {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return nil
	}
	elide := func(v any, what string) any {
		if s, ok := v.(string); ok && len(s) > 200 {
			return fmt.Sprintf("‹%s: %d bytes, shown in the turns›", what, len(s))
		}
		return v
	}
	m["response"] = elide(m["response"], "the response (the turns after the prompt)")
	if ts, ok := m["turns"].([]any); ok {
		for _, t := range ts {
			if tm, ok := t.(map[string]any); ok {
				tm["observation"] = elide(tm["observation"], "this turn's observation")
			}
		}
	}
	return m
}

// score computes every configured reward of r.
func (a *Analyzer) score(ctx context.Context, r *Rollout, raw *Raw, resp string) error {
	inputs, rplAt := r.rewardInputs(raw, resp)
	for _, kind := range a.cfg.Kinds {
		in, ok := inputs[kind]
		if !ok {
			continue
		}
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("inspect: encode %s input: %w", kind, err)
		}
		r.RewardInputs[kind] = b
		r.InputsShown[kind] = shownInput(b)
		res, err := a.scorer.ScoreBatch(ctx, kind, []json.RawMessage{b})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var ie *reward.InputError
			if errors.As(err, &ie) {
				r.RewardErrors[kind] = strings.Replace(ie.Error(), "rollouts[0]", "input", 1)
			} else {
				r.RewardErrors[kind] = err.Error()
			}
			continue
		}
		r.Rewards[kind] = res[0]
		a.values(r, res[0], rplAt)
	}
	return nil
}

// values records the components of one reward result.
func (a *Analyzer) values(r *Rollout, res any, rplAt []int) {
	v := r.Values
	switch x := res.(type) {
	case reward.QAResult:
		v["qa.em"], v["qa.f1"], v["qa.contains"] = x.EM, x.F1, x.Contains
		r.Formulas[reward.KindQA] = qaFormulas(x.QAScores, len(r.GoldenAnswers))
	case reward.RPLResult:
		if x.NGold > 0 {
			v["rpl.v_ret"], v["rpl.coverage"] = float64(x.VRet), x.Coverage
		}
		v["rpl.printed_docs"], v["rpl.printed_tokens"] = float64(x.PrintedDocs), float64(x.PrintedTokens)
		for j, i := range rplAt {
			if j < len(x.VRetTurns) && x.NGold > 0 {
				vr := x.VRetTurns[j]
				r.Turns[i].VRet = &vr
			}
		}
		r.Formulas[reward.KindRPL] = []string{
			fmt.Sprintf("coverage = gold_covered / n_gold = %d / %d = %s (matched by %s)", x.GoldCovered, x.NGold, num(x.Coverage), cmpOr(x.MatchedBy, "nothing: no gold support")),
			fmt.Sprintf("v_ret = [gold_covered = n_gold > 0] = %d; per turn %v", x.VRet, x.VRetTurns),
			fmt.Sprintf("printed_docs = %d distinct ids, printed_tokens = %d, retrieval_calls = %d, candidates = %d over %d turns", x.PrintedDocs, x.PrintedTokens, x.RetrievalCalls, x.Candidates, x.Turns),
		}
	case reward.SearchP1Result:
		if x.Error == "" {
			v["search-p1.total"], v["search-p1.format"], v["search-p1.path"], v["search-p1.outcome"] = x.Total, x.Format, x.Path, x.Outcome
		} else {
			r.RewardErrors[reward.KindSearchP1] = "judge: " + x.Error
		}
		r.Formulas[reward.KindSearchP1] = a.searchP1Formulas(x)
	case reward.ProRetrievalResult:
		v["proretrieval.total"], v["proretrieval.format"], v["proretrieval.exec"] = x.Total, x.Format, x.Exec
		v["proretrieval.result"], v["proretrieval.length"] = x.Result, x.Length
		r.Formulas[reward.KindProRetrieval] = a.proRetrievalFormulas(x)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// num formats a component as the page shows it (up to 4 decimals).
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func qaFormulas(x reward.QAScores, golds int) []string {
	if !x.Found {
		return []string{"no <answer> block: em = f1 = contains = 0"}
	}
	return []string{
		fmt.Sprintf("answer %q against %d gold answers (SQuAD normalisation after Unicode folding; best gold)", x.Answer, golds),
		fmt.Sprintf("em = [normalize(answer) = normalize(gold)] = %s; contains = [normalize(gold) ⊂ normalize(answer)] = %s; f1 = 2PR/(P+R) over tokens = %s", num(x.EM), num(x.Contains), num(x.F1)),
	}
}

func (a *Analyzer) searchP1Formulas(x reward.SearchP1Result) []string {
	c := a.cfg.Reward.SearchP1
	lf, lp, la := reward.Param(c.LambdaFormat, reward.DefaultLambdaFormat), reward.Param(c.LambdaPath, reward.DefaultLambdaPath), reward.Param(c.LambdaOutcome, reward.DefaultLambdaOutcome)
	al, decay := reward.Param(c.Alpha, reward.DefaultAlpha), reward.Param(c.Decay, reward.DefaultDecay)
	combine := cmpOr(c.PathCombine, reward.PathMax)
	f := []string{
		fmt.Sprintf("total = λp·path + λa·outcome + λf·format = %s×%s + %s×%s + %s×%s = %s", num(lp), num(x.Path), num(la), num(x.Outcome), num(lf), num(x.Format), num(x.Total)),
		fmt.Sprintf("s_self = r_planner × n_exec/n_plan × min(1, n_exec/n_actions) = %s × %d/%d × min(1, %d/%d) = %s", num(x.RPlanner), x.NExec, x.NPlan, x.NExec, x.NActions, num(x.SSelf)),
	}
	if x.RefAvailable {
		f = append(f, fmt.Sprintf("s_ref = n_ref_covered / n_ref = %d / %d = %s; path = %s(s_self, s_ref) = %s", x.NRefCovered, x.NRef, num(x.SRef), combine, num(x.Path)))
	} else {
		f = append(f, fmt.Sprintf("no reference plan: path = s_self = %s", num(x.Path)))
	}
	if x.Correct {
		f = append(f, "correct (the answer contains a gold answer): outcome = 1")
	} else {
		f = append(f, fmt.Sprintf("not correct: outcome = decay·(α·r_acc + (1−α)·r_reason) = %s×(%s×%s + %s×%s) = %s", num(decay), num(al), num(x.RAcc), num(1-al), num(x.RReason), num(x.Outcome)))
	}
	p := x.FormatParts
	f = append(f, fmt.Sprintf("format = 0.4·answer + 0.2·reasoning + 0.2·tool_calls + 0.2·structure = 0.4×%s + 0.2×%s + 0.2×%s + 0.2×%s = %s (judge %s)",
		num(p.Answer), num(p.Reasoning), num(p.ToolCalls), num(p.Structure), num(x.Format), x.Judge))
	return f
}

func (a *Analyzer) proRetrievalFormulas(x reward.ProRetrievalResult) []string {
	c := a.cfg.Reward.ProRetrieval
	wf, we := reward.Param(c.WeightFormat, reward.DefaultWeightFormat), reward.Param(c.WeightExec, reward.DefaultWeightExec)
	wr, wl := reward.Param(c.WeightResult, reward.DefaultWeightResult), reward.Param(c.WeightLength, reward.DefaultWeightLength)
	q := 0.0
	if x.Result > 0 {
		q = 1
	}
	return []string{
		fmt.Sprintf("total = %s·F + F·(%s·E + E·(%s·Q + [Q>0]·%s·L)) with F = %s, E = %s, Q = %s (%s), L = %s: %s",
			num(wf), num(we), num(wr), num(wl), num(x.Format), num(x.Exec), num(x.Result), x.Metric, num(x.Length), num(x.Total)),
		fmt.Sprintf("[Q>0] = %s; %d ids returned; %d response tokens; hit@1 %s, hit@3 %s, mrr %s, ndcg@3 %s",
			num(q), x.Ranked, x.Tokens, num(x.Metrics.Hit1), num(x.Metrics.Hit3), num(x.Metrics.MRR), num(x.Metrics.NDCG3)),
	}
}

// classify sets GoldSeen, Outcome and Patterns.
func (r *Rollout) classify() {
	r.GoldSeen = GoldUnknown
	if rp, ok := r.Rewards[reward.KindRPL].(reward.RPLResult); ok && rp.NGold > 0 {
		switch {
		case rp.GoldCovered == rp.NGold:
			r.GoldSeen = GoldAll
		case rp.GoldCovered > 0:
			r.GoldSeen = GoldSome
		default:
			r.GoldSeen = GoldNone
		}
	}
	r.Outcome = AnswerWrong
	if !r.AnswerFound || strings.TrimSpace(r.Answer) == "" {
		r.Outcome = AnswerNone
	} else if r.Values["qa.em"] == 1 {
		r.Outcome = AnswerCorrect
	}
	has := map[string]bool{
		PatternEmptyAnswer:    r.Outcome == AnswerNone,
		PatternRepeatedAnswer: r.AnswerBlocks >= 2,
		PatternGoldUnused:     r.GoldSeen == GoldAll && r.Outcome == AnswerWrong,
		PatternGoldNeverSeen:  r.GoldSeen == GoldNone,
		PatternNoRetrieval:    true,
	}
	for _, t := range r.Turns {
		if t.Program != "" || len(t.Searches) > 0 {
			has[PatternNoRetrieval] = false
		}
	}
	for _, c := range r.Codes {
		switch sdk.ErrorCode(c) {
		case sdk.CodeOK, sdk.CodeCancelled:
		case sdk.CodeBudget:
			has[PatternBudget] = true
		case sdk.CodeUnavailable, sdk.CodeInternal:
			has[PatternUnavailable] = true
		default:
			has[PatternProgramError] = true
		}
	}
	for _, p := range Patterns {
		if has[p.Name] {
			r.Patterns = append(r.Patterns, p.Name)
		}
	}
	r.Codes = slices.Clip(r.Codes)
}
