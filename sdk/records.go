package sdk

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch/internal/answer"
)

// Span is a part of a record's text. Start and End are character offsets
// (Unicode code points, as Python indexes str: text[start:end]);
// ByteStart and ByteEnd the same part in UTF-8 bytes (Go strings). Spans
// are in text order, do not overlap and cover the whole text.
type Span struct {
	Kind       string `json:"kind"` // SpanPrompt, SpanModel, SpanProgram, SpanObservation, SpanContinuation, SpanAnswer
	Start      int    `json:"start"`
	End        int    `json:"end"`
	ByteStart  int    `json:"byte_start"`
	ByteEnd    int    `json:"byte_end"`
	Supervised bool   `json:"supervised"`
}

// Record is one element (x, p', y') of D_mut: a rollout spliced at its last
// retrieval turn with a verified mutation p', its evidence and the
// continuation y' the policy regenerated from that context.
type Record struct {
	ID         string   `json:"id,omitempty"`
	Text       string   `json:"text"`
	Spans      []Span   `json:"spans"`
	Program    Program  `json:"program"`
	Source     string   `json:"source"`
	Distance   Distance `json:"distance"`
	PrintedIDs []string `json:"printed_ids"`
	// Answer is the content of the continuation's last <answer> block
	// (trimmed), Found whether there was one, Correct whether it matches a
	// gold answer by normalised exact match (internal/answer.ExactMatch, the
	// function behind reward.ExactMatch). The answer
	// span is supervised only when Correct.
	Answer  string `json:"answer"`
	Found   bool   `json:"found"`
	Correct bool   `json:"correct"`
}

// RecordRequest asks for one record: the rollout (with its gold), the
// verified mutation's program and the regenerated continuation.
type RecordRequest struct {
	Trajectory   Trajectory `json:"trajectory"`
	Program      Program    `json:"program"`
	Continuation string     `json:"continuation"`
}

var answerBlock = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)

// BuildRecord is the second step of the two-step API. It checks that
// req.Program is a member of U(p) for the rollout's last program p and
// executes it again to check V_ret(p') = 1 (so that D_mut holds verified
// programs only, whatever the caller sends), then splices the rollout
// exactly as Propose did and appends the continuation. Spans: prompt and
// observation never supervised, the program supervised, the policy's
// earlier text supervised only with MutateConfig.SuperviseEarlierTurns, the
// continuation supervised except its answer, which is supervised only when
// correct. cache may be nil. Errors: ErrNotMutable, ErrNotVerified,
// ErrBadArgument, ctx's error, index failures.
func (v *Verifier) BuildRecord(ctx context.Context, req RecordRequest, cache *Cache) (Record, error) {
	t := req.Trajectory
	rec := Record{ID: t.ID}
	gold := t.Gold()
	need := v.need(gold)
	if need == 0 {
		return rec, fmt.Errorf("%w: trajectory %q has no gold support ids (gold_ids)", ErrBadArgument, t.ID)
	}
	lp, err := v.parseLast(t)
	if err != nil {
		return rec, err
	}
	d, ok := DistanceTo(lp.prog, req.Program, lp.pool, v.space)
	if !ok {
		return rec, fmt.Errorf("%w: the program is not a mutation of the last program in the space in use", ErrNotVerified)
	}
	if cache == nil && !v.cfg.NoCache {
		cache = NewCache()
	}
	ex := executor{v: v, rt: v.rt, cache: cache, gold: gold.IDs, need: need}
	if cache != nil {
		ex.rt = v.rt.withScoreMemo()
		ex.fetched = map[cacheKey]bool{}
		ex.widest = map[cacheKey]int{}
	}
	orig, err := ex.run(ctx, lp.prog)
	if err != nil {
		return rec, err
	}
	e, err := ex.run(ctx, req.Program)
	if err != nil {
		return rec, err
	}
	if e.Code != CodeOK || !e.Verified {
		return rec, fmt.Errorf("%w: it prints %d of the %d gold documents needed (code %s)", ErrNotVerified, e.GoldCovered, need, e.Code)
	}
	src := req.Program.Source()
	sp := v.splice(t, lp, orig.Observation, src, e.Observation)
	rec.Program, rec.Source, rec.Distance, rec.PrintedIDs = req.Program, src, d, e.PrintedIDs

	cont := req.Continuation
	as, ae := -1, -1
	if m := answerBlock.FindAllStringSubmatchIndex(cont, -1); len(m) > 0 {
		last := m[len(m)-1]
		as, ae = last[2], last[3]
		rec.Answer, rec.Found = strings.TrimSpace(cont[as:ae]), true
		rec.Correct = answer.ExactMatch(rec.Answer, t.GoldenAnswers)
	}
	if as >= 0 {
		sp.parts = append(sp.parts, part{SpanContinuation, cont[:as]}, part{SpanAnswer, cont[as:ae]}, part{SpanContinuation, cont[ae:]})
	} else {
		sp.parts = append(sp.parts, part{SpanContinuation, cont})
	}
	var sb strings.Builder
	chars := 0
	for _, p := range sp.parts {
		if p.text == "" {
			continue
		}
		n := utf8.RuneCountInString(p.text)
		s := Span{Kind: p.kind, Start: chars, End: chars + n, ByteStart: sb.Len(), ByteEnd: sb.Len() + len(p.text)}
		switch p.kind {
		case SpanProgram, SpanContinuation:
			s.Supervised = true
		case SpanModel:
			s.Supervised = v.cfg.SuperviseEarlierTurns
		case SpanAnswer:
			s.Supervised = rec.Correct
		}
		// Merge with the previous span when kind and supervision agree.
		if k := len(rec.Spans) - 1; k >= 0 && rec.Spans[k].Kind == s.Kind && rec.Spans[k].Supervised == s.Supervised {
			rec.Spans[k].End, rec.Spans[k].ByteEnd = s.End, s.ByteEnd
		} else {
			rec.Spans = append(rec.Spans, s)
		}
		sb.WriteString(p.text)
		chars += n
	}
	rec.Text = sb.String()
	return rec, nil
}
