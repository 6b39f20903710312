package hybrid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rlsearch/rlsearch"
)

// RRFK is the reciprocal-rank-fusion constant of the ranking (Cormack,
// Clarke and Buettcher 2009: k = 60).
const RRFK = 60

// Result is the outcome of one program.
//
// Ranking (so that Hit@1 is defined): every result row gets
//
//	score(row) = Σ over positive entries i with row ∈ C_i of 1 / (RRFK + rank_i(row))
//
// where C_i is entry i's top-K candidate list, rank_i is 1-based and an
// entry is positive when its placeholder sits under an even number of
// negations (NOT, NOT IN). Rows are sorted by descending score, ties (in
// particular all rows that only structured predicates selected, score 0)
// by ascending row, that is, by their order in the collection's JSONL.
type Result struct {
	Rows   []int32   `json:"-"`
	IDs    []string  `json:"ids"`
	Scores []float64 `json:"scores"`
	// Total is the number of rows the WHERE clause selected (Rows holds at
	// most MaxResults of them); a program selecting more than MaxRows rows
	// fails with ErrTooManyRows instead.
	Total  int    `json:"total"`
	Timing Timing `json:"timing"`
	// Err is set by ExecuteBatch for a program that failed; the other
	// fields are then empty.
	Err error `json:"-"`
}

// Timing splits a program's time between vector retrieval and SQL.
type Timing struct {
	Retrieval time.Duration `json:"retrieval_ns"`
	SQL       time.Duration `json:"sql_ns"`
}

// ErrNoQueryEncoder is returned for an image entry without Vector when the
// collection was opened without an ImageEncoder.
var ErrNoQueryEncoder = errors.New("hybrid: no query encoder for image field")

// ErrTooManyRows is the Kind of the *Error of a program whose WHERE clause
// selects more than OpenConfig.MaxRows rows. It matches ErrLimit and
// rlsearch.ErrTooLarge (and, through *Error, rlsearch.ErrBadInput).
var ErrTooManyRows error = tooManyRows{}

type tooManyRows struct{}

func (tooManyRows) Error() string { return "hybrid: too many rows" }
func (tooManyRows) Is(target error) bool {
	return target == ErrLimit || target == rlsearch.ErrTooLarge
}

// Execute compiles and runs one program. Program errors wrap
// rlsearch.ErrBadInput; other errors are the machine's (database, encoder).
func (c *Collection) Execute(ctx context.Context, p Program) (*Result, error) {
	cp, err := c.Compile(p)
	if err != nil {
		return nil, err
	}
	res := c.ExecuteCompiled(ctx, []*Compiled{cp})
	if res[0].Err != nil {
		return nil, res[0].Err
	}
	return &res[0], nil
}

// ExecuteBatch compiles and runs programs; retrieval entries of all
// programs are grouped per field into one batched search each. The result
// has one entry per program, with Err set for those that failed (a bad
// program does not fail the batch).
func (c *Collection) ExecuteBatch(ctx context.Context, ps []Program) []Result {
	cps := make([]*Compiled, len(ps))
	errs := make([]error, len(ps))
	for i, p := range ps {
		cps[i], errs[i] = c.Compile(p)
	}
	res := c.ExecuteCompiled(ctx, cps)
	for i, err := range errs {
		if err != nil {
			res[i] = Result{Err: err}
		}
	}
	return res
}

// candidates holds the top-K rows of one entry, in rank order.
type candidates []int32

// ExecuteCompiled runs compiled programs, batching their retrievals per
// field. nil entries are skipped (their Result stays zero, Err nil), so a
// caller can keep the slots of programs that failed to compile.
func (c *Collection) ExecuteCompiled(ctx context.Context, cps []*Compiled) []Result {
	res := make([]Result, len(cps))
	t0 := time.Now()
	cands, errs := c.retrieveAll(ctx, cps)
	retr := time.Since(t0)
	var total int
	for _, cp := range cps {
		if cp != nil {
			total += len(cp.Program.RetrievalList)
		}
	}
	for i, cp := range cps {
		if cp == nil {
			continue
		}
		if errs[i] != nil {
			res[i].Err = errs[i]
			continue
		}
		// Retrieval is batched across programs: charge each its share.
		var share time.Duration
		if total > 0 {
			share = retr * time.Duration(len(cp.Program.RetrievalList)) / time.Duration(total)
		}
		r, err := c.run(ctx, cp, cands[i])
		if err != nil {
			res[i].Err = err
			continue
		}
		r.Timing.Retrieval = share
		res[i] = *r
	}
	return res
}

// retrieveAll answers every retrieval entry, batched per field.
func (c *Collection) retrieveAll(ctx context.Context, cps []*Compiled) ([][]candidates, []error) {
	out := make([][]candidates, len(cps))
	errs := make([]error, len(cps))
	type ref struct{ prog, entry int }
	groups := map[[2]int][]ref{} // (0 text | 1 image, field) -> entries
	for i, cp := range cps {
		if cp == nil {
			continue
		}
		out[i] = make([]candidates, len(cp.Program.RetrievalList))
		for j, r := range cp.Program.RetrievalList {
			kind := 0
			if r.Type == "image" {
				kind = 1
			}
			key := [2]int{kind, cp.Field[j]}
			groups[key] = append(groups[key], ref{i, j})
		}
	}
	keys := make([][2]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for _, key := range keys {
		refs := groups[key]
		var fx fieldIndex
		var name string
		if key[0] == 0 {
			fx, name = c.text[key[1]], c.Meta.Schema.Text[key[1]].Name
		} else {
			fx, name = c.image[key[1]], c.Meta.Schema.Image[key[1]].Name
		}
		entries := make([]Retrieval, len(refs))
		for n, rf := range refs {
			entries[n] = cps[rf.prog].Program.RetrievalList[rf.entry]
		}
		lists, err := c.search(ctx, fx, key[0] == 1, name, entries)
		for n, rf := range refs {
			if err != nil {
				if errs[rf.prog] == nil {
					errs[rf.prog] = err
				}
				continue
			}
			out[rf.prog][rf.entry] = lists[n]
		}
	}
	return out, errs
}

// search runs entries against one field index and returns top-K rows each.
func (c *Collection) search(ctx context.Context, fx fieldIndex, image bool, name string, entries []Retrieval) ([]candidates, error) {
	k := c.cfg.K
	toRows := func(hits [][]rlsearch.Hit, m []int32) []candidates {
		out := make([]candidates, len(hits))
		for i, hs := range hits {
			out[i] = make(candidates, len(hs))
			for j, h := range hs {
				if m != nil {
					out[i][j] = m[h.Row]
				} else {
					out[i][j] = h.Row
				}
			}
		}
		return out
	}
	switch fx.kind {
	case IndexBM25:
		qs := make([]string, len(entries))
		for i, e := range entries {
			qs[i] = e.Query
		}
		hits, err := fx.bm.SearchBatch(ctx, qs, k)
		if err != nil {
			return nil, err
		}
		return toRows(hits, nil), nil
	case IndexE5, "vectors":
		dim := fx.flat.Dim()
		q := make([]float32, 0, len(entries)*dim)
		var toEncode []string
		var at []int
		for i, e := range entries {
			if len(e.Vector) > 0 {
				if len(e.Vector) != dim {
					return nil, fmt.Errorf("%w: field %s: query vector has %d values, want %d", rlsearch.ErrBadInput, name, len(e.Vector), dim)
				}
				for _, v := range e.Vector {
					if !finite(float64(v)) {
						return nil, fmt.Errorf("%w: field %s: query vector has a non-finite value", rlsearch.ErrBadInput, name)
					}
				}
				q = append(q, e.Vector...)
				continue
			}
			toEncode = append(toEncode, e.Query)
			at = append(at, i)
			q = append(q, make([]float32, dim)...)
		}
		if len(toEncode) > 0 {
			enc := c.cfg.Encoder
			if image {
				enc = c.cfg.ImageEncoder
			}
			if enc == nil {
				return nil, fmt.Errorf("%w %s: pass a vector in the entry or open the collection with an ImageEncoder: %w", ErrNoQueryEncoder, name, rlsearch.ErrBadInput)
			}
			v, err := enc.EncodeQueries(ctx, toEncode)
			if err != nil {
				return nil, fmt.Errorf("hybrid: encode queries for %s: %w", name, err)
			}
			if len(v) != len(toEncode)*dim {
				return nil, fmt.Errorf("hybrid: encoder for %s returned %d values, want %d", name, len(v), len(toEncode)*dim)
			}
			for n, i := range at {
				copy(q[i*dim:(i+1)*dim], v[n*dim:(n+1)*dim])
			}
		}
		hits, err := fx.flat.Search(ctx, q, min(k, fx.flat.Len()))
		if err != nil {
			return nil, err
		}
		return toRows(hits, fx.rows), nil
	}
	return nil, fmt.Errorf("%w: field %s has no index (no vectors were given at build time)", rlsearch.ErrBadInput, name)
}

// run evaluates one compiled program with its candidates in SQLite and
// ranks the rows.
//
// The row set is never materialised: SQLite is asked for at most
// MaxRows+1 rows (LIMIT), and of the rows it streams only those the
// ranking can return are kept: every row of a positive candidate list
// (at most MaxRetrievals × K, all with a score > 0) and the MaxResults
// smallest of the others (score 0, ordered by row). Memory per program is
// therefore O(MaxResults + MaxRetrievals × K) whatever the WHERE clause
// selects, and the answer equals ranking the full row set (rankAll, the
// tests' oracle).
func (c *Collection) run(ctx context.Context, cp *Compiled, cands []candidates) (*Result, error) {
	slotOf := make(map[*InSet]int, len(cp.Slot))
	for i, s := range cp.Slot {
		slotOf[s] = i
	}
	sorted := make([][]int32, len(cands))
	for i, cs := range cands {
		sorted[i] = slices.Clone(cs)
		slices.Sort(sorted[i])
	}
	q, args := sqlNFC(cp.Expr, func(s *InSet) []int32 { return sorted[slotOf[s]] }, c.nonNFC)
	q += " LIMIT ?"
	args = append(args, int64(c.cfg.MaxRows)+1)
	score := scores(cp, cands)
	t0 := time.Now()
	rs, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("hybrid: sqlite: %w", err)
	}
	defer rs.Close()
	var (
		hit   []scored // rows with a score > 0
		zero  rowHeap  // the MaxResults smallest rows with score 0 (max-heap)
		total int
	)
	for rs.Next() {
		var r64 int64
		if err := rs.Scan(&r64); err != nil {
			return nil, fmt.Errorf("hybrid: sqlite: %w", err)
		}
		total++
		if total > c.cfg.MaxRows {
			return nil, &Error{Kind: ErrTooManyRows, Pos: -1, Field: "sql",
				Msg: fmt.Sprintf("the WHERE clause selects more than %d rows (OpenConfig.MaxRows); narrow it with a filter or a retrieval placeholder", c.cfg.MaxRows)}
		}
		r := int32(r64)
		if s, ok := score[r]; ok {
			hit = append(hit, scored{r, s})
			continue
		}
		zero.keep(r, c.cfg.MaxResults)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("hybrid: sqlite: %w", err)
	}
	sqlTime := time.Since(t0)
	slices.Sort(zero)
	all := hit
	for _, r := range zero {
		all = append(all, scored{r, 0})
	}
	res := c.ranked(all, total)
	res.Timing.SQL = sqlTime
	return res, nil
}

// scored is a result row and its RRF score.
type scored struct {
	row int32
	s   float64
}

// scores returns the RRF score of every row of a positive candidate list
// (all > 0); rows absent from the map score 0.
func scores(cp *Compiled, cands []candidates) map[int32]float64 {
	score := map[int32]float64{}
	for i, cs := range cands {
		if !cp.Positive[i] {
			continue
		}
		for rank, r := range cs {
			score[r] += 1 / float64(RRFK+rank+1)
		}
	}
	return score
}

// rankAll orders every row of rows as documented on Result and keeps
// MaxResults: the plain oracle of run's streaming selection.
func (c *Collection) rankAll(cp *Compiled, cands []candidates, rows []int32) *Result {
	score := scores(cp, cands)
	all := make([]scored, len(rows))
	for i, r := range rows {
		all[i] = scored{r, score[r]}
	}
	return c.ranked(all, len(rows))
}

// ranked sorts rows by descending score, ties by ascending row, and
// returns the first MaxResults with Total = total.
func (c *Collection) ranked(all []scored, total int) *Result {
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return int(a.row) - int(b.row)
	})
	n := min(len(all), c.cfg.MaxResults)
	res := &Result{Total: total, Rows: make([]int32, n), IDs: make([]string, n), Scores: make([]float64, n)}
	for i := range n {
		res.Rows[i], res.IDs[i], res.Scores[i] = all[i].row, c.ids[all[i].row], all[i].s
	}
	return res
}

// rowHeap is a max-heap of rows (the largest at [0]) that keep bounds to
// the n smallest rows seen.
type rowHeap []int32

// keep adds r if fewer than n rows are held or r is smaller than the
// largest, which it then replaces.
func (h *rowHeap) keep(r int32, n int) {
	a := *h
	if len(a) < n {
		a = append(a, r)
		for i := len(a) - 1; i > 0; {
			p := (i - 1) / 2
			if a[p] >= a[i] {
				break
			}
			a[p], a[i] = a[i], a[p]
			i = p
		}
		*h = a
		return
	}
	if n == 0 || r >= a[0] {
		return
	}
	a[0] = r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(a) && a[l] > a[m] {
			m = l
		}
		if l+1 < len(a) && a[l+1] > a[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
}

// EvalGo evaluates a compiled program over every row in plain Go, with
// the same candidates the SQL path would use, and returns the selected
// rows in ascending order. It is the oracle for the SQL path (tests) and
// costs O(rows × nodes).
func (c *Collection) EvalGo(ctx context.Context, cp *Compiled) ([]int32, error) {
	cands, errs := c.retrieveAll(ctx, []*Compiled{cp})
	if errs[0] != nil {
		return nil, errs[0]
	}
	sets := make(map[*InSet]map[int32]bool, len(cp.Slot))
	for i, s := range cp.Slot {
		m := map[int32]bool{}
		for _, r := range cands[0][i] {
			m[r] = true
		}
		sets[s] = m
	}
	var out []int32
	for r := range int32(len(c.ids)) {
		col := func(name string) cell { return c.cellOf(r, name) }
		if evalRow(cp.Expr, col, func(s *InSet) bool { return sets[s][r] }) == triTrue {
			out = append(out, r)
		}
	}
	return out, nil
}
