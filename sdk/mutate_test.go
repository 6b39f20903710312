package sdk

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// mutPool are query strings for property tests (no index needed).
var mutPool = []string{
	"Who directed the 2018 film Robin Hood?",
	"Otto Bathurst",
	"American Western film 1943 Columbia Pictures",
	"William Berke",
	"silent film director screenwriter",
	"Joaquin Murrieta folk hero",
	"When was the director of The Robin Hood of El Dorado born?",
	"zzqx unmatched query",
}

// mutRandomProgram draws a valid typed program whose queries come from
// pool, and the pool itself (the program's queries plus some others).
func mutRandomProgram(rng *rand.Rand, modes []Mode, rerank bool, maxPool int) (Program, []string) {
	for {
		perm := rng.Perm(len(mutPool))
		nq := 1 + rng.IntN(min(MaxQueries, maxPool))
		np := nq + rng.IntN(maxPool-nq+1)
		var pool []string
		for _, i := range perm[:np] {
			pool = append(pool, mutPool[i])
		}
		p := Program{Queries: slices.Clone(pool[:nq]), Mode: modes[rng.IntN(len(modes))], Width: Widths[rng.IntN(len(Widths))]}
		if rerank {
			p.Rerank = RerankWidths[rng.IntN(len(RerankWidths))]
		}
		p.Print = 1 + rng.IntN(MaxPrint)
		if p.Validate() == nil {
			rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
			return p, pool
		}
	}
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
}

// TestMutationsProperties: on seeded random programs, pools and spaces,
// every enumerated mutation is a valid typed program, draws its queries
// from the pool (keeping the pool), differs from p, is accepted by
// DistanceTo with the same distance, appears once, and the enumeration is
// in non-decreasing distance with the documented tie-breaks.
func TestMutationsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	spaces := []Space{
		{},
		{Modes: []Mode{ModeSparse}, RerankWidths: []int{0}},
		{Modes: []Mode{ModeDense, ModeFuse}, Widths: []int{3, 10, 50}, MaxPrint: 5},
	}
	total := 0
	const n = 80
	for i := range n {
		s := spaces[i%len(spaces)]
		maxPool := 5
		if i%20 == 0 {
			maxPool = MaxPool
		}
		p, pool := mutRandomProgram(rng, []Mode{ModeDense, ModeSparse, ModeFuse}, true, maxPool)
		poolBefore := slices.Clone(pool)
		muts, err := Mutations(p, pool, s)
		if err != nil {
			t.Fatalf("Mutations(%+v, %q): %v", p, pool, err)
		}
		if !slices.Equal(pool, poolBefore) {
			t.Fatalf("Mutations changed the pool: %q, was %q", pool, poolBefore)
		}
		again, _ := Mutations(p, pool, s)
		if !reflect.DeepEqual(muts, again) {
			t.Fatalf("enumeration of %+v is not deterministic", p)
		}
		sw := s.withDefaults()
		seen := map[string]bool{}
		for j, m := range muts {
			q := m.Program
			if err := q.Validate(); err != nil {
				t.Fatalf("p=%+v: mutation %d %+v invalid: %v", p, j, q, err)
			}
			for _, x := range q.Queries {
				if !slices.Contains(pool, x) {
					t.Fatalf("mutation %+v uses %q, not in the pool %q", q, x, pool)
				}
			}
			if q.Calls() > 1 && q.Mode != ModeFuse && len(q.Queries) < 2 {
				t.Fatalf("unfused calls in %+v", q)
			}
			if !slices.Contains(sw.Modes, q.Mode) || !slices.Contains(sw.Widths, q.Width) || !slices.Contains(sw.RerankWidths, q.Rerank) || q.Print > sw.MaxPrint {
				t.Fatalf("mutation %+v outside the space %+v", q, sw)
			}
			if sameSet(q.Queries, p.Queries) && q.Mode == p.Mode && q.Width == p.Width && q.Rerank == p.Rerank {
				t.Fatalf("p itself (%+v) enumerated as %+v", p, q)
			}
			if key := fmt.Sprintf("%q/%d/%d/%d", q.Queries, q.Mode, q.Width, q.Rerank); seen[key] {
				t.Fatalf("mutation %+v enumerated twice", q)
			} else {
				seen[key] = true
			}
			if d, ok := DistanceTo(p, q, pool, s); !ok || d != m.Distance {
				t.Fatalf("DistanceTo(%+v, %+v) = %v, %v; enumeration says %v", p, q, d, ok, m.Distance)
			}
			if m.Calls != q.Calls() || m.Candidates != q.Calls()*q.Width {
				t.Fatalf("mutation %+v: calls %d candidates %d", q, m.Calls, m.Candidates)
			}
			if j > 0 {
				prev := muts[j-1]
				c := prev.Distance.Compare(m.Distance)
				if c > 0 || (c == 0 && (prev.Candidates > m.Candidates || (prev.Candidates == m.Candidates && prev.Calls > m.Calls))) {
					t.Fatalf("order broken at %d: %+v (%v, %d cands, %d calls) before %+v (%v, %d, %d)", j, prev.Program, prev.Distance, prev.Candidates, prev.Calls, q, m.Distance, m.Candidates, m.Calls)
				}
			}
		}
		total += len(muts)
	}
	t.Logf("%d programs, %d mutations checked", n, total)
}

// TestMutationsComplete: the enumeration holds every member of U(p):
// brute force over all (subset, mode, width, rerank) tuples through
// DistanceTo finds the same set.
func TestMutationsComplete(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for range 20 {
		p, pool := mutRandomProgram(rng, []Mode{ModeDense, ModeSparse, ModeFuse}, true, 5)
		if !slices.ContainsFunc(p.Queries, func(q string) bool { return !slices.Contains(pool, q) }) {
			muts, err := Mutations(p, pool, Space{})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for mask := 1; mask < 1<<len(pool); mask++ {
				var sub []string
				for i := range pool {
					if mask&(1<<i) != 0 {
						sub = append(sub, pool[i])
					}
				}
				if len(sub) > MaxQueries {
					continue
				}
				sub = orderQueries(p, sub, pool)
				for _, m := range []Mode{ModeDense, ModeSparse, ModeFuse} {
					for _, w := range Widths {
						for _, r := range RerankWidths {
							q := Program{Queries: sub, Mode: m, Width: w, Rerank: r}
							q.Print = printOf(q, MaxPrint)
							if _, ok := DistanceTo(p, q, pool, Space{}); ok {
								want++
							}
						}
					}
				}
			}
			if len(muts) != want {
				t.Fatalf("p=%+v pool=%q: %d mutations enumerated, brute force finds %d", p, pool, len(muts), want)
			}
		}
	}
}

func TestMutationsOrder(t *testing.T) {
	a, b, c := "alpha query", "beta query", "gamma query"
	tests := []struct {
		name  string
		p     Program
		pool  []string
		space Space
		want  []Program // the first len(want) mutations, in order
		size  int       // |U(p)|, -1 = not checked
	}{
		{
			name:  "single sparse query, sparse only: the width ladder",
			p:     Program{Queries: []string{a}, Mode: ModeSparse, Width: 3, Print: 3},
			space: Space{Modes: []Mode{ModeSparse}, RerankWidths: []int{0}},
			want: []Program{
				{Queries: []string{a}, Mode: ModeSparse, Width: 5, Print: 5},
				{Queries: []string{a}, Mode: ModeSparse, Width: 10, Print: 10},
				{Queries: []string{a}, Mode: ModeSparse, Width: 20, Print: 20},
				{Queries: []string{a}, Mode: ModeSparse, Width: 50, Print: 20},
			},
			size: 4,
		},
		{
			name: "width steps first, fewer candidates first among equals",
			p:    Program{Queries: []string{a}, Mode: ModeSparse, Width: 10, Print: 3},
			want: []Program{
				// distance 0/0/0/1/0: widths 5 and 20, fewer candidates first
				{Queries: []string{a}, Mode: ModeSparse, Width: 5, Print: 5},
				{Queries: []string{a}, Mode: ModeSparse, Width: 20, Print: 20},
				{Queries: []string{a}, Mode: ModeSparse, Width: 3, Print: 3},
				{Queries: []string{a}, Mode: ModeSparse, Width: 50, Print: 20},
			},
			size: -1,
		},
		{
			name:  "query subsets: fewer candidates, then fewer calls, then pool order",
			p:     Program{Queries: []string{a, b}, Mode: ModeSparse, Width: 5, Print: 10},
			pool:  []string{a, b, c},
			space: Space{Modes: []Mode{ModeSparse}, RerankWidths: []int{0}, Widths: []int{5}},
			want: []Program{
				{Queries: []string{a}, Mode: ModeSparse, Width: 5, Print: 5},
				{Queries: []string{b}, Mode: ModeSparse, Width: 5, Print: 5},
				{Queries: []string{a, b, c}, Mode: ModeSparse, Width: 5, Print: 15},
				{Queries: []string{a, c}, Mode: ModeSparse, Width: 5, Print: 10},
				{Queries: []string{b, c}, Mode: ModeSparse, Width: 5, Print: 10},
				{Queries: []string{c}, Mode: ModeSparse, Width: 5, Print: 5},
			},
			size: 6,
		},
		{
			name:  "rerank query stays first; the print budget caps at 20",
			p:     Program{Queries: []string{b, a}, Mode: ModeFuse, Width: 20, Rerank: 5, Print: 5},
			space: Space{Modes: []Mode{ModeFuse}, Widths: []int{20}, RerankWidths: []int{0, 5}},
			want: []Program{
				{Queries: []string{b}, Mode: ModeFuse, Width: 20, Rerank: 5, Print: 5},
				{Queries: []string{a}, Mode: ModeFuse, Width: 20, Rerank: 5, Print: 5},
				{Queries: []string{b, a}, Mode: ModeFuse, Width: 20, Print: 20},
				{Queries: []string{b}, Mode: ModeFuse, Width: 20, Print: 20},
				{Queries: []string{a}, Mode: ModeFuse, Width: 20, Print: 20},
			},
			size: 5,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			muts, err := Mutations(tc.p, tc.pool, tc.space)
			if err != nil {
				t.Fatal(err)
			}
			if tc.size >= 0 && len(muts) != tc.size {
				t.Errorf("|U(p)| = %d, want %d", len(muts), tc.size)
			}
			for j := 1; j < len(muts); j++ {
				if muts[j-1].Distance.Compare(muts[j].Distance) > 0 {
					t.Fatalf("distance decreases at %d", j)
				}
			}
			if last := muts[len(muts)-1]; tc.space.Modes == nil && (last.Distance.Mode != 2 || last.Program.Mode != ModeDense) {
				t.Errorf("last mutation %+v (%v): want the sparse→dense swap (two routes changed) last", last.Program, last.Distance)
			}
			for i, w := range tc.want {
				if i >= len(muts) {
					t.Fatalf("only %d mutations", len(muts))
				}
				if got := muts[i].Program; !slices.Equal(got.Queries, w.Queries) || got.Mode != w.Mode || got.Width != w.Width || got.Rerank != w.Rerank || got.Print != w.Print {
					t.Errorf("mutation %d = %+v (%v), want %+v", i, got, muts[i].Distance, w)
				}
			}
		})
	}
}

func TestDistance(t *testing.T) {
	q := []string{"x"}
	tests := []struct {
		p, q Program
		want Distance
	}{
		{Program{Queries: q, Mode: ModeDense, Width: 3, Print: 3}, Program{Queries: q, Mode: ModeFuse, Width: 3, Print: 6}, Distance{Mode: 1}},
		{Program{Queries: q, Mode: ModeDense, Width: 3, Print: 3}, Program{Queries: q, Mode: ModeSparse, Width: 3, Print: 3}, Distance{Mode: 2}},
		{Program{Queries: q, Mode: ModeSparse, Width: 3, Print: 3}, Program{Queries: q, Mode: ModeSparse, Width: 50, Rerank: 10, Print: 10}, Distance{RerankToggle: 1, Width: 4, Rerank: 3}},
		{Program{Queries: q, Mode: ModeSparse, Width: 20, Rerank: 3, Print: 3}, Program{Queries: q, Mode: ModeSparse, Width: 20, Rerank: 20, Print: 20}, Distance{Rerank: 3}},
		{Program{Queries: []string{"x", "y"}, Mode: ModeSparse, Width: 3, Print: 3}, Program{Queries: []string{"y", "z"}, Mode: ModeSparse, Width: 3, Print: 6}, Distance{Queries: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.want.String(), func(t *testing.T) {
			if got := distance(tc.p, tc.q); got != tc.want {
				t.Errorf("distance(%+v, %+v) = %v, want %v", tc.p, tc.q, got, tc.want)
			}
		})
	}
	if (Distance{Mode: 1}).Compare(Distance{RerankToggle: 1, Queries: 4, Width: 4, Rerank: 4}) != 1 {
		t.Error("a mode change must weigh more than every later field")
	}
	if (Distance{Queries: 1}).Compare(Distance{Width: 4, Rerank: 4}) != 1 {
		t.Error("a query change must weigh more than width and rerank steps")
	}
}

func TestMutationsErrors(t *testing.T) {
	p := Program{Queries: []string{"a"}, Mode: ModeSparse, Width: 3, Print: 3}
	tests := []struct {
		name  string
		p     Program
		pool  []string
		space Space
		want  error
	}{
		{"invalid program", Program{Queries: []string{"a"}, Mode: ModeSparse, Width: 4, Print: 3}, nil, Space{}, ErrNotMutable},
		{"query not in pool", p, []string{"b"}, Space{}, ErrNotMutable},
		{"repeated pool entry", p, []string{"a", "a"}, Space{}, ErrNotMutable},
		{"pool too large", p, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, Space{}, ErrNotMutable},
		{"width off the ladder", p, nil, Space{Widths: []int{4}}, ErrBadArgument},
		{"print over 20", p, nil, Space{MaxPrint: 21}, ErrBadArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Mutations(tc.p, tc.pool, tc.space); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
