package sdk

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// MaxPool is the most distinct queries a mutation may draw from: the query
// pool of a program is its own queries (at most MaxQueries), optionally
// followed by the queries of earlier turns of the rollout (see
// MutateConfig.PoolFromEarlierTurns), cut to MaxPool. Chosen here: it keeps
// U(p) at most 162 subsets × 75 = 12,150 members.
const MaxPool = 8

// ErrNotMutable marks a program or a rollout the verifier cannot mutate
// (no retrieval turn, a program outside the typed subset, a bad pool).
var ErrNotMutable = errors.New("sdk: not mutable")

// Space restricts the mutation space U(p). The zero value is the paper's
// full grammar (RPL Section 3, Appendix B): every mode, the width ladder
// Widths, the rerank ladder RerankWidths and at most MaxPrint printed
// documents.
type Space struct {
	// Modes a mutation may use; nil means dense, sparse and fuse.
	Modes []Mode `json:"modes,omitempty"`
	// Widths a mutation may use, a subset of Widths; nil means all.
	Widths []int `json:"widths,omitempty"`
	// RerankWidths a mutation may use, a subset of RerankWidths (0 = no
	// reranking); nil means all.
	RerankWidths []int `json:"rerank_widths,omitempty"`
	// MaxPrint: a mutation prints min(kept, MaxPrint) documents, kept
	// being Rerank when reranking and the candidates otherwise; 0 means
	// MaxPrint (20, the paper's print budget).
	MaxPrint int `json:"max_print,omitempty"`
}

// withDefaults fills nil fields.
func (s Space) withDefaults() Space {
	if s.Modes == nil {
		s.Modes = []Mode{ModeDense, ModeSparse, ModeFuse}
	}
	if s.Widths == nil {
		s.Widths = Widths
	}
	if s.RerankWidths == nil {
		s.RerankWidths = RerankWidths
	}
	if s.MaxPrint == 0 {
		s.MaxPrint = MaxPrint
	}
	return s
}

// Validate reports the first field outside the typed grammar.
func (s Space) Validate() error {
	for i, m := range s.Modes {
		if m < ModeDense || m > ModeFuse {
			return fmt.Errorf("%w: Space.Modes[%d] = %d is not dense, sparse or fuse", ErrBadArgument, i, uint8(m))
		}
	}
	for i, w := range s.Widths {
		if !slices.Contains(Widths, w) {
			return fmt.Errorf("%w: Space.Widths[%d] = %d is not on the ladder %v", ErrBadArgument, i, w, Widths)
		}
	}
	for i, r := range s.RerankWidths {
		if !slices.Contains(RerankWidths, r) {
			return fmt.Errorf("%w: Space.RerankWidths[%d] = %d is not on the ladder %v", ErrBadArgument, i, r, RerankWidths)
		}
	}
	if s.MaxPrint < 0 || s.MaxPrint > MaxPrint {
		return fmt.Errorf("%w: Space.MaxPrint = %d, want 0..%d", ErrBadArgument, s.MaxPrint, MaxPrint)
	}
	return nil
}

// Distance is the structural distance between a program p and a mutation
// p', compared field by field in this order (RPL Section 3): retrieval-mode
// changes, adding or removing reranking, query-subset changes, steps on the
// width ladder, steps on the rerank ladder.
type Distance struct {
	// Mode is the number of routes added or removed (|routes(p) Δ
	// routes(p')|): dense→fuse is 1, dense→sparse is 2.
	Mode int `json:"mode"`
	// RerankToggle is 1 when p' adds or removes reranking.
	RerankToggle int `json:"rerank_toggle"`
	// Queries is the number of queries added or removed (|Q_p Δ Q_p'|).
	Queries int `json:"queries"`
	// Width is the number of steps between the widths on the width ladder.
	Width int `json:"width"`
	// Rerank is the number of steps on the rerank ladder (0 counted as its
	// first rung).
	Rerank int `json:"rerank"`
}

// Compare returns -1, 0 or +1 as d is nearer than, as near as, or farther
// than e, comparing the fields lexicographically in their order.
func (d Distance) Compare(e Distance) int {
	return cmp.Or(cmp.Compare(d.Mode, e.Mode), cmp.Compare(d.RerankToggle, e.RerankToggle),
		cmp.Compare(d.Queries, e.Queries), cmp.Compare(d.Width, e.Width), cmp.Compare(d.Rerank, e.Rerank))
}

// String renders d as "mode/rerank_toggle/queries/width/rerank", the key
// of distance histograms.
func (d Distance) String() string {
	return fmt.Sprintf("%d/%d/%d/%d/%d", d.Mode, d.RerankToggle, d.Queries, d.Width, d.Rerank)
}

// Mutation is one member p' of U(p) with its distance from p.
type Mutation struct {
	Program  Program  `json:"program"`
	Distance Distance `json:"distance"`
	// Candidates is the number of candidates the retrieval calls ask for
	// (Calls × Width) and Calls the number of retrieval calls: the
	// tie-breaks of the order.
	Candidates int `json:"candidates"`
	Calls      int `json:"calls"`
}

// routesOf is the set of routes of a mode as a bit mask (1 dense, 2 sparse).
func routesOf(m Mode) int {
	switch m {
	case ModeDense:
		return 1
	case ModeSparse:
		return 2
	case ModeFuse:
		return 3
	}
	return 0
}

// Pool returns the query pool of p: p's queries, then the extra queries in
// order, without repeats or blank strings, cut to MaxPool (p's own queries
// always kept).
func Pool(p Program, extra ...string) []string {
	pool := slices.Clone(p.Queries)
	for _, q := range extra {
		if len(pool) >= MaxPool {
			break
		}
		if strings.TrimSpace(q) != "" && len(q) <= DefaultMaxQueryBytes && !slices.Contains(pool, q) {
			pool = append(pool, q)
		}
	}
	return pool
}

// DistanceTo returns the distance from p to q and whether q is a member of
// U(p) under space s with pool: a valid program, different from p in its
// (query set, mode, width, rerank), whose queries are drawn from pool, that
// prints what the space prescribes and ranks for p's first query when it
// keeps it.
func DistanceTo(p, q Program, pool []string, s Space) (Distance, bool) {
	s = s.withDefaults()
	if p.Validate() != nil || q.Validate() != nil {
		return Distance{}, false
	}
	for _, x := range q.Queries {
		if !slices.Contains(pool, x) {
			return Distance{}, false
		}
	}
	if !slices.Contains(s.Modes, q.Mode) || !slices.Contains(s.Widths, q.Width) || !slices.Contains(s.RerankWidths, q.Rerank) {
		return Distance{}, false
	}
	want := orderQueries(p, q.Queries, pool)
	if !slices.Equal(want, q.Queries) || q.Print != printOf(q, s.MaxPrint) {
		return Distance{}, false
	}
	d := distance(p, q)
	if d == (Distance{}) {
		return d, false
	}
	return d, true
}

// orderQueries orders a query subset canonically: p's first query first when
// the subset holds it (it is the rerank query), then pool order.
func orderQueries(p Program, subset, pool []string) []string {
	out := make([]string, 0, len(subset))
	if slices.Contains(subset, p.Queries[0]) {
		out = append(out, p.Queries[0])
	}
	for _, x := range pool {
		if x != p.Queries[0] && slices.Contains(subset, x) {
			out = append(out, x)
		}
	}
	return out
}

// printOf is the printed count of a mutation: min(kept, maxPrint).
func printOf(q Program, maxPrint int) int {
	kept := q.Calls() * q.Width
	if q.Rerank > 0 {
		kept = q.Rerank
	}
	return min(kept, maxPrint)
}

func distance(p, q Program) Distance {
	var d Distance
	d.Mode = bits.OnesCount(uint(routesOf(p.Mode) ^ routesOf(q.Mode)))
	if (p.Rerank > 0) != (q.Rerank > 0) {
		d.RerankToggle = 1
	}
	for _, x := range p.Queries {
		if !slices.Contains(q.Queries, x) {
			d.Queries++
		}
	}
	for _, x := range q.Queries {
		if !slices.Contains(p.Queries, x) {
			d.Queries++
		}
	}
	d.Width = absInt(slices.Index(Widths, p.Width) - slices.Index(Widths, q.Width))
	d.Rerank = absInt(slices.Index(RerankWidths, p.Rerank) - slices.Index(RerankWidths, q.Rerank))
	return d
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Mutations enumerates U(p) under space s, nearest first. pool is the query
// pool Q_p (nil means p.Queries); it must hold every query of p, at most
// MaxPool distinct non-blank queries. Members are the programs
// (S, mode, width, rerank) with S a non-empty subset of the pool of at
// most MaxQueries queries, except p's own tuple, that pass
// Program.Validate: several calls are fused (the typed form always fuses
// them), no query repeats (no duplicate calls), Rerank ≤ Calls × Width,
// and Print = min(kept, s.MaxPrint) ≤ 20. Queries are ordered with p's
// first query first when S holds it (it stays the rerank query), then in
// pool order.
//
// Order: Distance.Compare; ties by Candidates (Calls × Width), then Calls
// (smaller first), then mode (dense, sparse, fuse), the subset's pool
// positions (lexicographically), width and rerank. The order is a total
// order on the members, so the enumeration is deterministic.
//
// Errors wrap ErrNotMutable (p invalid, a bad pool) or ErrBadArgument (a
// bad space). The result is a new slice owned by the caller.
func Mutations(p Program, pool []string, s Space) ([]Mutation, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotMutable, err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.withDefaults()
	if pool == nil {
		pool = p.Queries
	}
	if len(pool) > MaxPool {
		return nil, fmt.Errorf("%w: query pool has %d queries, at most %d", ErrNotMutable, len(pool), MaxPool)
	}
	for i, q := range pool {
		if strings.TrimSpace(q) == "" || slices.Index(pool[:i], q) >= 0 {
			return nil, fmt.Errorf("%w: query pool entry %d is blank or repeated", ErrNotMutable, i)
		}
	}
	for _, q := range p.Queries {
		if !slices.Contains(pool, q) {
			return nil, fmt.Errorf("%w: query %q of the program is not in the pool", ErrNotMutable, q)
		}
	}
	type member struct {
		Mutation
		subset []int // pool positions
	}
	var out []member
	n := len(pool)
	for mask := 1; mask < 1<<n; mask++ {
		if bits.OnesCount(uint(mask)) > MaxQueries {
			continue
		}
		var subset []string
		var pos []int
		for i := range n {
			if mask&(1<<i) != 0 {
				subset = append(subset, pool[i])
				pos = append(pos, i)
			}
		}
		qs := orderQueries(p, subset, pool)
		for _, m := range s.Modes {
			for _, w := range s.Widths {
				for _, r := range s.RerankWidths {
					q := Program{Queries: qs, Mode: m, Width: w, Rerank: r}
					if r > q.Calls()*w {
						continue // reranking cannot keep more than was retrieved
					}
					q.Print = printOf(q, s.MaxPrint)
					if q.Validate() != nil {
						continue // never produce an invalid member
					}
					d := distance(p, q)
					if d == (Distance{}) {
						continue // p itself
					}
					out = append(out, member{Mutation{Program: q, Distance: d, Candidates: q.Calls() * w, Calls: q.Calls()}, pos})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b member) int {
		return cmp.Or(a.Distance.Compare(b.Distance),
			cmp.Compare(a.Candidates, b.Candidates), cmp.Compare(a.Calls, b.Calls),
			cmp.Compare(a.Program.Mode, b.Program.Mode), slices.Compare(a.subset, b.subset),
			cmp.Compare(a.Program.Width, b.Program.Width), cmp.Compare(a.Program.Rerank, b.Program.Rerank))
	})
	res := make([]Mutation, len(out))
	for i, m := range out {
		res[i] = m.Mutation
	}
	return res, nil
}
