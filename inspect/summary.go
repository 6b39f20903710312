package inspect

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
)

// Component describes one numeric component shown in the batch view.
type Component struct {
	Key   string `json:"key"`   // Rollout.Values key
	Label string `json:"label"` // what the page calls it
	// Scale is "unit" for components in [0, 1] (10 bins of width 0.1, the
	// last closed) or "count" for counts (one bin per value 0..cap-1 and a
	// last bin "≥ cap", cap = min(max, 20)).
	Scale string `json:"scale"`
}

// Components lists every component the batch view can plot, in order.
var Components = []Component{
	{"qa.em", "EM", "unit"},
	{"qa.f1", "F1", "unit"},
	{"qa.contains", "answer contains gold (sub-EM)", "unit"},
	{"rpl.v_ret", "RPL V_ret", "unit"},
	{"rpl.coverage", "RPL gold coverage", "unit"},
	{"search-p1.total", "Search-P1 total", "unit"},
	{"search-p1.path", "Search-P1 path", "unit"},
	{"search-p1.outcome", "Search-P1 outcome", "unit"},
	{"search-p1.format", "Search-P1 format", "unit"},
	{"proretrieval.total", "ProRetrieval total", "unit"},
	{"proretrieval.format", "ProRetrieval format", "unit"},
	{"proretrieval.exec", "ProRetrieval execution", "unit"},
	{"proretrieval.result", "ProRetrieval result", "unit"},
	{"proretrieval.length", "ProRetrieval length", "unit"},
	{"calls", "retrieval calls per rollout", "count"},
	{"turns", "policy turns per rollout", "count"},
	{"rpl.printed_docs", "printed documents per rollout", "count"},
}

// maxCountBins bounds the bins of a count histogram.
const maxCountBins = 20

// Row is the compact form of a rollout for the batch table and for
// filtering and sorting: what a page of the table shows, never the
// rollout's text.
type Row struct {
	Index    int                `json:"i"`
	Line     int                `json:"line"`
	ID       string             `json:"id"`
	IDRank   int                `json:"r"`   // rank of ID in byte order among the dump's rows (sorting by id)
	Question string             `json:"q"`   // the first 200 characters
	Answer   string             `json:"a"`   // the first 120 characters
	Found    bool               `json:"af"`  // an answer block was found
	Format   string             `json:"f"`   // Format*
	Codes    []string           `json:"c"`   // distinct outcome codes, in order of first appearance
	Patterns []string           `json:"p"`   // failure patterns
	GoldSeen string             `json:"gs"`  // Gold*
	Outcome  string             `json:"ans"` // Answer*
	Values   map[string]float64 `json:"v"`
}

// Row lengths of the question and answer previews, in characters.
const (
	rowQuestionChars = 200
	rowAnswerChars   = 120
)

func clip(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// newRow is r's row (IDRank is set when the dump is complete).
func newRow(r *Rollout) Row {
	row := Row{Index: r.Index, Line: r.Line, ID: r.ID, Question: clip(r.Question, rowQuestionChars),
		Answer: clip(r.Answer, rowAnswerChars), Found: r.AnswerFound, Format: r.Format, Patterns: r.Patterns,
		GoldSeen: r.GoldSeen, Outcome: r.Outcome, Values: map[string]float64{}}
	uniq, _ := rlsearch.Distinct(r.Codes)
	row.Codes = append([]string{}, uniq...)
	for k, v := range r.Values {
		row.Values[k] = v
	}
	row.Values["calls"] = float64(r.Calls)
	turns := 0
	for _, t := range r.Turns {
		if t.Role == RoleModel {
			turns++
		}
	}
	row.Values["turns"] = float64(turns)
	return row
}

// Histogram is the distribution of one component over a dump.
type Histogram struct {
	Component
	N      int      `json:"n"` // rollouts with a value
	Mean   float64  `json:"mean"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
	Cap    int      `json:"cap,omitempty"` // count scale: the last bin holds values ≥ Cap
	Bins   []string `json:"bins"`          // bin labels
	Counts []int    `json:"counts"`
	sum    float64  // running sum
}

// binOf is the bin of v: for "unit", floor(10·v) clamped to [0, 9]; for
// "count", min(floor(v), Cap) (Cap is the last bin). The page computes the
// same expression on the same float64 values.
func (h *Histogram) binOf(v float64) int {
	if h.Scale == "unit" {
		return min(max(int(math.Floor(v*10)), 0), 9)
	}
	return min(max(int(math.Floor(v)), 0), h.Cap)
}

// Count is a label with a count.
type Count struct {
	Name  string `json:"name"`
	Label string `json:"label,omitempty"`
	Count int    `json:"count"`
}

// BadLine is a dump line that could not be read.
type BadLine struct {
	Line    int    `json:"line"`
	Error   string `json:"error"`
	Preview string `json:"preview"` // the line's first 160 bytes, as text
}

// MaxBadLines is the most bad lines a summary lists (all are counted).
const MaxBadLines = 200

// GoldTable counts rollouts by gold coverage (rows: GoldAll, GoldSome,
// GoldNone, GoldUnknown) and answer (columns: AnswerCorrect, AnswerWrong,
// AnswerNone).
type GoldTable struct {
	Rows   []string `json:"rows"`
	Cols   []string `json:"cols"`
	Counts [][]int  `json:"counts"`
}

var (
	goldRows = []string{GoldAll, GoldSome, GoldNone, GoldUnknown}
	ansCols  = []string{AnswerCorrect, AnswerWrong, AnswerNone}
)

// Summary is a dump at a glance, computed in Go over every rollout.
type Summary struct {
	Dump       string         `json:"dump"`
	Lines      int            `json:"lines"`    // non-blank lines read
	Rollouts   int            `json:"rollouts"` // lines read into rollouts
	Bad        int            `json:"bad"`      // lines that could not be read
	BadLines   []BadLine      `json:"bad_lines"`
	Formats    map[string]int `json:"formats"`
	Judge      string         `json:"judge"`
	Gold       string         `json:"gold"` // the questions file joined ("" = none)
	Components []*Histogram   `json:"components"`
	GoldTable  GoldTable      `json:"gold_table"`
	Codes      []Count        `json:"codes"`    // program outcome codes over program turns, most frequent first
	Patterns   []Count        `json:"patterns"` // failure patterns, in the order of Patterns
	// RewardErrors counts, per reward kind, rollouts that kind could not
	// score, with the first message.
	RewardErrors []Count `json:"reward_errors"`
	LoadSeconds  float64 `json:"load_seconds"`
}

// summarize computes the summary of rows; codes are every program turn's
// outcome code, rewardErrs the count and first message per kind.
func summarize(rows []Row, codes map[string]int, rewardErrs map[string]*Count) *Summary {
	s := &Summary{Rollouts: len(rows), Formats: map[string]int{}, BadLines: []BadLine{}}
	for _, r := range rows {
		s.Formats[r.Format]++
	}
	for _, c := range Components {
		h := &Histogram{Component: c, Min: math.Inf(1), Max: math.Inf(-1)}
		for _, r := range rows {
			v, ok := r.Values[c.Key]
			if !ok {
				continue
			}
			h.N++
			h.sum += v
			h.Min, h.Max = math.Min(h.Min, v), math.Max(h.Max, v)
		}
		if h.N == 0 {
			continue
		}
		h.Mean = h.sum / float64(h.N)
		if c.Scale == "unit" {
			h.Counts = make([]int, 10)
			for i := range 10 {
				hi := "1.0]"
				if i < 9 {
					hi = fmt.Sprintf("%.1f)", float64(i+1)/10)
				}
				h.Bins = append(h.Bins, fmt.Sprintf("[%.1f, %s", float64(i)/10, hi))
			}
		} else {
			h.Cap = min(max(int(h.Max), 0), maxCountBins)
			h.Counts = make([]int, h.Cap+1)
			for i := range h.Cap + 1 {
				h.Bins = append(h.Bins, strconv.Itoa(i))
			}
			if int(h.Max) > h.Cap {
				h.Bins[h.Cap] = "≥" + strconv.Itoa(h.Cap)
			}
		}
		for _, r := range rows {
			if v, ok := r.Values[c.Key]; ok {
				h.Counts[h.binOf(v)]++
			}
		}
		s.Components = append(s.Components, h)
	}
	s.GoldTable = GoldTable{Rows: goldRows, Cols: ansCols, Counts: make([][]int, len(goldRows))}
	for i := range s.GoldTable.Counts {
		s.GoldTable.Counts[i] = make([]int, len(ansCols))
	}
	pat := map[string]int{}
	for _, r := range rows {
		gi, ai := slices.Index(goldRows, r.GoldSeen), slices.Index(ansCols, r.Outcome)
		if gi >= 0 && ai >= 0 {
			s.GoldTable.Counts[gi][ai]++
		}
		for _, p := range r.Patterns {
			pat[p]++
		}
	}
	for _, p := range Patterns {
		s.Patterns = append(s.Patterns, Count{Name: p.Name, Label: p.Label, Count: pat[p.Name]})
	}
	s.Codes = []Count{}
	for c, n := range codes {
		s.Codes = append(s.Codes, Count{Name: c, Count: n})
	}
	slices.SortFunc(s.Codes, func(a, b Count) int { return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Name, b.Name)) })
	s.RewardErrors = []Count{}
	for _, c := range rewardErrs {
		s.RewardErrors = append(s.RewardErrors, *c)
	}
	slices.SortFunc(s.RewardErrors, func(a, b Count) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// Query selects, orders and pages the rows of a dump; the page's report
// mode applies the same rules in JavaScript (app.js, rowsQuery).
type Query struct {
	// Text keeps rows whose id, question or answer preview contains it,
	// compared lower-cased (strings.ToLower here, toLowerCase in the page).
	Text string
	// Pattern keeps rows with that failure pattern; Code rows with a
	// program of that outcome code; Format rows of that dump format.
	Pattern, Code, Format string
	// Cell keeps rows of one gold table cell, "GOLD:ANSWER" ("all:wrong").
	Cell string
	// Bin keeps rows whose component KEY falls in bin I, "KEY:I".
	Bin string
	// Sort is "index" (default), "id" or a component key; rows without a
	// value come last either way; ties keep the dump's order.
	Sort string
	Desc bool
	// Offset and Limit page the result (Limit 1..MaxLimit, 0 = DefaultLimit).
	Offset, Limit int
}

// Page sizes of Query.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

// Page is one page of rows and the number of rows the query selects.
type Page struct {
	Total  int   `json:"total"`
	Offset int   `json:"offset"`
	Rows   []Row `json:"rows"`
}

// check validates q against the summary s; errors name the query
// parameter.
func (q *Query) check(s *Summary) (bin *Histogram, binIdx int, err error) {
	switch {
	case q.Offset < 0:
		return nil, 0, rlsearch.BadField("offset", "offset %d is negative", q.Offset)
	case q.Limit < 0 || q.Limit > MaxLimit:
		return nil, 0, rlsearch.BadField("limit", "limit %d: want 1..%d (0 = %d)", q.Limit, MaxLimit, DefaultLimit)
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	if q.Pattern != "" && !slices.ContainsFunc(Patterns, func(p struct{ Name, Label string }) bool { return p.Name == q.Pattern }) {
		return nil, 0, rlsearch.BadField("pattern", "unknown pattern %q", q.Pattern)
	}
	if q.Cell != "" {
		g, a, ok := strings.Cut(q.Cell, ":")
		if !ok || !slices.Contains(goldRows, g) || !slices.Contains(ansCols, a) {
			return nil, 0, rlsearch.BadField("cell", "cell %q: want GOLD:ANSWER with GOLD in %v and ANSWER in %v", q.Cell, goldRows, ansCols)
		}
	}
	if q.Bin != "" {
		key, i, ok := strings.Cut(q.Bin, ":")
		n, err := strconv.Atoi(i)
		if ok && err == nil {
			for _, h := range s.Components {
				if h.Key == key && n >= 0 && n < len(h.Counts) {
					return h, n, q.checkSort()
				}
			}
		}
		return nil, 0, rlsearch.BadField("bin", "bin %q: want KEY:I with a plotted component and a bin index", q.Bin)
	}
	return nil, 0, q.checkSort()
}

func (q *Query) checkSort() error {
	switch q.Sort {
	case "", "index", "id":
		return nil
	}
	if slices.ContainsFunc(Components, func(c Component) bool { return c.Key == q.Sort }) {
		return nil
	}
	return rlsearch.BadField("sort", "unknown sort key %q (index, id or a component key)", q.Sort)
}

// match reports whether row passes q's filters (text already lower-cased).
func (q *Query) match(r *Row, text string, bin *Histogram, binIdx int) bool {
	if q.Pattern != "" && !slices.Contains(r.Patterns, q.Pattern) ||
		q.Code != "" && !slices.Contains(r.Codes, q.Code) ||
		q.Format != "" && r.Format != q.Format ||
		q.Cell != "" && q.Cell != r.GoldSeen+":"+r.Outcome {
		return false
	}
	if bin != nil {
		v, ok := r.Values[bin.Key]
		if !ok || bin.binOf(v) != binIdx {
			return false
		}
	}
	if text != "" && !strings.Contains(strings.ToLower(r.ID+"\n"+r.Question+"\n"+r.Answer), text) {
		return false
	}
	return true
}

// query runs q over rows (in dump order) with the summary s.
func query(rows []Row, s *Summary, q Query) (Page, error) {
	bin, binIdx, err := q.check(s)
	if err != nil {
		return Page{}, err
	}
	text := strings.ToLower(q.Text)
	sel := make([]int, 0, len(rows))
	for i := range rows {
		if q.match(&rows[i], text, bin, binIdx) {
			sel = append(sel, i)
		}
	}
	if q.Sort != "" && q.Sort != "index" || q.Desc {
		key := func(r *Row) (float64, bool) {
			switch q.Sort {
			case "", "index":
				return float64(r.Index), true
			case "id":
				return float64(r.IDRank), true
			}
			v, ok := r.Values[q.Sort]
			return v, ok
		}
		slices.SortStableFunc(sel, func(a, b int) int {
			va, oka := key(&rows[a])
			vb, okb := key(&rows[b])
			switch {
			case oka != okb:
				if oka {
					return -1
				}
				return 1
			case !oka || va == vb:
				return 0
			case q.Desc:
				return cmp.Compare(vb, va)
			}
			return cmp.Compare(va, vb)
		})
	}
	p := Page{Total: len(sel), Offset: q.Offset, Rows: []Row{}}
	for _, i := range sel[min(q.Offset, len(sel)):min(q.Offset+q.Limit, len(sel))] {
		p.Rows = append(p.Rows, rows[i])
	}
	return p, nil
}
