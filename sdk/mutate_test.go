package sdk

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/internal/transcript"
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

// TestMutateTranscript runs testdata/mutate.txt, the structural distance
// and the mutation space (see the file's header for its commands). Beside
// the printed outputs it checks, for every case, what must hold of any
// enumeration: distances never decrease, DistanceTo agrees with the
// enumeration on each member, and under the full mode set the last member
// of a single-route program is the swap to the other route (two routes
// changed).
func TestMutateTranscript(t *testing.T) {
	transcript.Run(t, "testdata/mutate.txt", func(t *testing.T, c *transcript.Case) string {
		lines := strings.Split(c.Input, "\n")
		switch c.Cmd {
		case "distance":
			if len(lines) != 2 {
				t.Fatalf("%s: distance wants two program lines, p then q", c.Pos())
			}
			p, q := mutParseProgram(t, c, lines[0]), mutParseProgram(t, c, lines[1])
			d := distance(p, q)
			pool := Pool(p, q.Queries...)
			dt, ok := DistanceTo(p, q, pool, Space{})
			if ok && dt != d {
				t.Errorf("DistanceTo = %v, distance = %v", dt, d)
			}
			return fmt.Sprintf("distance: %v\nmember: %v\n", d, ok)
		case "compare":
			if len(lines) != 2 {
				t.Fatalf("%s: compare wants two distances", c.Pos())
			}
			d, e := mutParseDistance(t, c, lines[0]), mutParseDistance(t, c, lines[1])
			if got, back := d.Compare(e), e.Compare(d); got != -back {
				t.Errorf("Compare is not antisymmetric: %d and %d", got, back)
			}
			return fmt.Sprintf("compare: %s\n", map[int]string{-1: "-1 (nearer)", 0: "0 (as near)", 1: "+1 (farther)"}[d.Compare(e)])
		case "mutations":
			return mutRunMutations(t, c, lines)
		}
		t.Fatalf("%s: unknown command %q (want distance, compare or mutations)", c.Pos(), c.Cmd)
		return ""
	})
}

// mutRunMutations runs one mutations case: the program on the input's
// first line, an optional "pool: q1 | q2" line, the space from the
// command's arguments.
func mutRunMutations(t *testing.T, c *transcript.Case, lines []string) string {
	p := mutParseProgram(t, c, lines[0])
	var pool []string
	for _, l := range lines[1:] {
		v, ok := strings.CutPrefix(l, "pool:")
		if !ok {
			t.Fatalf("%s: want a \"pool: q1 | q2\" line after the program, got %q", c.Pos(), l)
		}
		pool = mutSplitQueries(v)
	}
	s := mutParseSpace(t, c)
	head := -1
	if v, ok := c.Arg("head"); ok {
		var err error
		if head, err = strconv.Atoi(v); err != nil {
			t.Fatalf("%s: head=%q", c.Pos(), v)
		}
	}
	muts, err := Mutations(p, pool, s)
	if err != nil {
		var b strings.Builder
		fmt.Fprintf(&b, "error: %s\nkind:", err)
		for _, k := range []struct {
			name string
			err  error
		}{{"ErrNotMutable", ErrNotMutable}, {"ErrBadArgument", ErrBadArgument}, {"ErrNotTyped", ErrNotTyped}} {
			if errors.Is(err, k.err) {
				b.WriteString(" " + k.name)
			}
		}
		b.WriteString("\n")
		return b.String()
	}
	if pool == nil {
		pool = p.Queries
	}
	for j, m := range muts {
		if j > 0 && muts[j-1].Distance.Compare(m.Distance) > 0 {
			t.Errorf("distance decreases at %d: %v then %v", j, muts[j-1].Distance, m.Distance)
		}
		if d, ok := DistanceTo(p, m.Program, pool, s); !ok || d != m.Distance {
			t.Errorf("DistanceTo(%s) = %v, %v; the enumeration says %v", mutFormatProgram(m.Program), d, ok, m.Distance)
		}
	}
	if len(muts) > 0 && s.Modes == nil && p.Mode != ModeFuse {
		if last := muts[len(muts)-1]; last.Distance.Mode != 2 || last.Program.Mode == p.Mode || last.Program.Mode == ModeFuse {
			t.Errorf("last mutation %s (%v): want the swap to the other route (two routes changed) last", mutFormatProgram(last.Program), last.Distance)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d mutations\n", len(muts))
	line := func(m Mutation) {
		fmt.Fprintf(&b, "%v calls=%d cands=%d  %s\n", m.Distance, m.Calls, m.Candidates, mutFormatProgram(m.Program))
	}
	for j, m := range muts {
		if head >= 0 && j >= head && j < len(muts)-1 {
			fmt.Fprintf(&b, "... %d more ...\n", len(muts)-1-head)
			line(muts[len(muts)-1])
			break
		}
		line(m)
	}
	return b.String()
}

// mutParseProgram reads a program written "MODE width=W [rerank=R]
// print=P: query | query".
func mutParseProgram(t *testing.T, c *transcript.Case, l string) Program {
	t.Helper()
	head, qs, ok := strings.Cut(l, ": ")
	fields := strings.Fields(head)
	if !ok || len(fields) == 0 {
		t.Fatalf("%s: want \"MODE width=W [rerank=R] print=P: query | query\", got %q", c.Pos(), l)
	}
	p := Program{Queries: mutSplitQueries(qs)}
	if err := p.Mode.UnmarshalText([]byte(fields[0])); err != nil {
		t.Fatalf("%s: %v", c.Pos(), err)
	}
	for _, f := range fields[1:] {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %q: want key=integer", c.Pos(), f)
		}
		switch k {
		case "width":
			p.Width = n
		case "rerank":
			p.Rerank = n
		case "print":
			p.Print = n
		default:
			t.Fatalf("%s: unknown program field %q (want width, rerank, print)", c.Pos(), k)
		}
	}
	return p
}

// mutFormatProgram writes p as mutParseProgram reads it (rerank=0 left out).
func mutFormatProgram(p Program) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s width=%d", p.Mode, p.Width)
	if p.Rerank != 0 {
		fmt.Fprintf(&b, " rerank=%d", p.Rerank)
	}
	fmt.Fprintf(&b, " print=%d: %s", p.Print, strings.Join(p.Queries, " | "))
	return b.String()
}

func mutSplitQueries(s string) []string {
	var qs []string
	for _, q := range strings.Split(s, "|") {
		qs = append(qs, strings.TrimSpace(q))
	}
	return qs
}

// mutParseSpace reads the space from the command's arguments modes=(...),
// widths=(...), rerank_widths=(...) and max_print=N; an absent one is the
// zero field (the full grammar).
func mutParseSpace(t *testing.T, c *transcript.Case) Space {
	t.Helper()
	var s Space
	ints := func(vals []string) []int {
		out := []int{} // widths=() is an empty, not a nil, list
		for _, v := range vals {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %q is not an integer", c.Pos(), v)
			}
			out = append(out, n)
		}
		return out
	}
	for _, a := range c.Args {
		switch a.Key {
		case "modes":
			s.Modes = []Mode{}
			for _, v := range a.Vals {
				var m Mode
				if err := m.UnmarshalText([]byte(v)); err != nil {
					t.Fatalf("%s: %v", c.Pos(), err)
				}
				s.Modes = append(s.Modes, m)
			}
		case "widths":
			s.Widths = ints(a.Vals)
		case "rerank_widths":
			s.RerankWidths = ints(a.Vals)
		case "max_print":
			if len(a.Vals) != 1 {
				t.Fatalf("%s: want max_print=N", c.Pos())
			}
			s.MaxPrint = ints(a.Vals)[0]
		case "head":
		default:
			t.Fatalf("%s: unknown argument %q", c.Pos(), a.Key)
		}
	}
	return s
}

// mutParseDistance reads a Distance written as its String,
// "mode/rerank_toggle/queries/width/rerank".
func mutParseDistance(t *testing.T, c *transcript.Case, l string) Distance {
	t.Helper()
	var d Distance
	if n, err := fmt.Sscanf(l, "%d/%d/%d/%d/%d", &d.Mode, &d.RerankToggle, &d.Queries, &d.Width, &d.Rerank); err != nil || n != 5 || d.String() != l {
		t.Fatalf("%s: want a distance m/t/q/w/r, got %q", c.Pos(), l)
	}
	return d
}
