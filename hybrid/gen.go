package hybrid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"
)

// Levels of ProRetrieval §4.1: L1 one condition, L2 two or three, L3 four
// or five with OR/NOT/nesting; test-set shares about 40/40/20 %.
const (
	L1 = "L1"
	L2 = "L2"
	L3 = "L3"
)

// Leaf describes one grounded condition of an instance.
type Leaf struct {
	Field   string `json:"field"`
	Kind    string `json:"kind"` // "categorical", "numeric", "text" or "image"
	Negated bool   `json:"negated"`
	Pred    string `json:"pred"` // the leaf as DSL text
}

// Instance is one benchmark instance (§3.2): the gold program, its gold
// rows G and ground-truth set T ⊇ G, with the metadata the paper stores.
type Instance struct {
	ID         string   `json:"id"`
	Collection string   `json:"collection"`
	Level      string   `json:"level"`
	NumLeaves  int      `json:"num_leaves"`
	NumGroups  int      `json:"num_groups"`
	Pattern    string   `json:"pattern"` // "leaf", "AND", "OR", "(AND) OR (AND)", "(OR) AND (OR)"
	Modalities []string `json:"modalities"`
	Modality   string   `json:"modality"` // "structured", "text", "image" or "hybrid"
	Leaves     []Leaf   `json:"leaves"`
	Program    Program  `json:"program"`
	Gold       []string `json:"gold"`
	Truth      []string `json:"truth"`
	Query      string   `json:"query,omitempty"` // step iv (optional)
}

// GenConfig configures Generate. Zero fields mean the defaults given.
type GenConfig struct {
	// N is the number of instances wanted (required, > 0).
	N int
	// Seed of the PCG random source; equal seeds give equal instances.
	Seed uint64
	// Level fixes the level ("L1", "L2", "L3"); "" gives the paper's
	// 40/40/20 % split of the kept instances (quotas, since deeper levels
	// are pruned more often).
	Level string
	// MaxTruth drops instances whose ground-truth set is larger (default
	// 20, the paper's K: one retrieval's worth of candidates).
	MaxTruth int
	// MaxAttempts bounds the sampling attempts (default 200·N).
	MaxAttempts int
	// TextProb is the probability that a leaf is a text leaf when the
	// gold row has text (default 0.35: structured fields are favoured).
	TextProb float64
}

// Validate names the first bad field.
func (g GenConfig) Validate() error {
	switch {
	case g.N <= 0:
		return fmt.Errorf("hybrid: GenConfig.N %d must be > 0", g.N)
	case g.Level != "" && g.Level != L1 && g.Level != L2 && g.Level != L3:
		return fmt.Errorf("hybrid: GenConfig.Level %q: want L1, L2, L3 or empty", g.Level)
	case g.MaxTruth < 0, g.MaxAttempts < 0:
		return errors.New("hybrid: GenConfig.MaxTruth and MaxAttempts must be >= 0")
	case g.TextProb < 0 || g.TextProb > 1:
		return fmt.Errorf("hybrid: GenConfig.TextProb %v must be in [0, 1]", g.TextProb)
	}
	return nil
}

// GenStats counts what happened to the sampled candidates.
type GenStats struct {
	Attempts         int            `json:"attempts"`
	Kept             int            `json:"kept"`
	PrunedEmpty      int            `json:"pruned_empty"`      // structural super-query selected nothing
	PrunedOversized  int            `json:"pruned_oversized"`  // structural sub-query already over MaxTruth
	DroppedEmpty     int            `json:"dropped_empty"`     // executed T empty
	DroppedOversized int            `json:"dropped_oversized"` // executed T over MaxTruth
	DroppedGold      int            `json:"dropped_gold"`      // a gold row missing from T
	DroppedDuplicate int            `json:"dropped_duplicate"`
	NoGrounding      int            `json:"no_grounding"` // no leaf could be grounded
	PerLevel         map[string]int `json:"per_level"`
}

// Generate builds benchmark instances from the collection (steps i–iii of
// §3.2): sample the level and leaf count, a two-level Boolean template,
// ground leaves in sampled gold rows, compile the gold program, prune with
// the structural-only super-query, execute and filter. The natural-language
// query (step iv) is left empty; see Verbalizer. Safe for concurrent use
// with other readers of c.
func Generate(ctx context.Context, c *Collection, cfg GenConfig) ([]Instance, GenStats, error) {
	st := GenStats{PerLevel: map[string]int{}}
	if err := cfg.Validate(); err != nil {
		return nil, st, err
	}
	if cfg.MaxTruth == 0 {
		cfg.MaxTruth = DefaultK
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 200 * cfg.N
	}
	if cfg.TextProb == 0 {
		cfg.TextProb = 0.35
	}
	g := &generator{c: c, cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))}
	if cfg.Level == "" {
		l1 := int(math.Round(0.4 * float64(cfg.N)))
		l2 := int(math.Round(0.4 * float64(cfg.N)))
		g.quota = map[string]int{L1: l1, L2: l2, L3: cfg.N - l1 - l2}
	}
	seen := map[string]bool{}
	var out []Instance
	for len(out) < cfg.N && st.Attempts < cfg.MaxAttempts {
		if err := ctx.Err(); err != nil {
			return out, st, err
		}
		st.Attempts++
		inst, ok, err := g.one(ctx, &st)
		if err != nil {
			return out, st, err
		}
		if !ok {
			continue
		}
		key, _ := json.Marshal(inst.Program)
		if seen[string(key)] {
			st.DroppedDuplicate++
			continue
		}
		seen[string(key)] = true
		inst.ID = fmt.Sprintf("%s-%d-%05d", c.Meta.Schema.Name, cfg.Seed, len(out))
		out = append(out, inst)
		st.Kept++
		st.PerLevel[inst.Level]++
		if g.quota != nil {
			g.quota[inst.Level]--
		}
	}
	return out, st, nil
}

type generator struct {
	c     *Collection
	cfg   GenConfig
	rng   *rand.Rand
	quota map[string]int // instances still wanted per level (mixed mode)
}

type gleaf struct {
	expr Expr
	leaf Leaf
	ret  *Retrieval
}

func (g *generator) level() (string, int) {
	lv := g.cfg.Level
	if lv == "" {
		// Sample a level in proportion to its remaining quota.
		total := 0
		for _, l := range []string{L1, L2, L3} {
			total += max(0, g.quota[l])
		}
		x := g.rng.IntN(max(total, 1))
		lv = L3
		for _, l := range []string{L1, L2, L3} {
			if q := max(0, g.quota[l]); x < q {
				lv = l
				break
			} else {
				x -= q
			}
		}
	}
	switch lv {
	case L1:
		return lv, 1
	case L2:
		return lv, 2 + g.rng.IntN(2)
	}
	return lv, 4 + g.rng.IntN(2)
}

func (g *generator) one(ctx context.Context, st *GenStats) (Instance, bool, error) {
	c := g.c
	level, n := g.level()
	// (i) structure: K = 1 (flat AND / OR) or K = 2 two-level templates.
	pattern := "leaf"
	var groups [][]int // leaf indexes per group
	inner, outer := "AND", "AND"
	switch {
	case n == 1:
		groups = [][]int{{0}}
	case n >= 3 && g.rng.IntN(2) == 0:
		m := 1 + g.rng.IntN(n-1)
		groups = [][]int{seq(0, m), seq(m, n)}
		if g.rng.IntN(2) == 0 {
			pattern, inner, outer = "(AND) OR (AND)", "AND", "OR"
		} else {
			pattern, inner, outer = "(OR) AND (OR)", "OR", "AND"
		}
	case g.rng.IntN(2) == 0:
		pattern, groups = "AND", [][]int{seq(0, n)}
	default:
		pattern, outer = "OR", "OR"
		for i := range n {
			groups = append(groups, []int{i})
		}
	}
	// (ii) grounding: one shared gold under an inter-group AND, one
	// distinct gold per group under OR.
	gold := make([]int32, len(groups))
	shared := int32(g.rng.IntN(c.Len()))
	for i := range groups {
		gold[i] = shared
		if outer == "OR" {
			gold[i] = int32(g.rng.IntN(c.Len()))
		}
	}
	pNeg := math.Min(0.5, 0.12*float64(n-1))
	leaves := make([]gleaf, n)
	anyNeg := false
	for gi, grp := range groups {
		for _, li := range grp {
			neg := g.rng.Float64() < pNeg
			// A negated leaf alone in an OR group would select almost
			// everything; keep single-leaf OR groups positive.
			if outer == "OR" && len(grp) == 1 && pattern != "AND" {
				neg = false
			}
			l, ok, err := g.ground(ctx, gold[gi], neg)
			if err != nil {
				return Instance{}, false, err
			}
			if !ok {
				st.NoGrounding++
				return Instance{}, false, nil
			}
			anyNeg = anyNeg || neg
			leaves[li] = l
		}
	}
	if level == L3 && pattern == "AND" && !anyNeg {
		// L3 needs OR, NOT or nesting (§4.1): negate one leaf afresh.
		i := g.rng.IntN(n)
		l, ok, err := g.ground(ctx, gold[0], true)
		if err != nil || !ok {
			st.NoGrounding++
			return Instance{}, false, err
		}
		leaves[i] = l
	}
	// (iii) compilation.
	var groupExprs []Expr
	for _, grp := range groups {
		var args []Expr
		for _, li := range grp {
			args = append(args, leaves[li].expr)
		}
		if len(args) == 1 {
			groupExprs = append(groupExprs, args[0])
		} else {
			groupExprs = append(groupExprs, &Logic{Op: inner, Args: args})
		}
	}
	var root Expr
	if len(groupExprs) == 1 {
		root = groupExprs[0]
	} else {
		root = &Logic{Op: outer, Args: groupExprs}
	}
	var list []Retrieval
	counts := map[string]int{}
	var mods []string
	for _, l := range leaves {
		if l.ret != nil {
			is := findInSet(l.expr)
			is.Index = counts[is.Kind]
			counts[is.Kind]++
			list = append(list, *l.ret)
		}
		mod := "structured"
		if l.leaf.Kind == "text" || l.leaf.Kind == "image" {
			mod = l.leaf.Kind
		}
		if !slices.Contains(mods, mod) {
			mods = append(mods, mod)
		}
	}
	slices.Sort(mods)
	for i := range leaves {
		leaves[i].leaf.Pred = Format(leaves[i].expr)
	}
	prog := Program{SQL: "WHERE " + Format(root), RetrievalList: list}
	if list == nil {
		prog.RetrievalList = []Retrieval{}
	}
	cp, err := c.Compile(prog)
	if err != nil {
		return Instance{}, false, fmt.Errorf("hybrid: generated program does not compile (bug): %s: %w", prog.SQL, err)
	}
	// Structural-only super-query: prune without vector retrieval.
	upper, err := c.count(ctx, cp.Expr, true)
	if err != nil {
		return Instance{}, false, err
	}
	if upper == 0 {
		st.PrunedEmpty++
		return Instance{}, false, nil
	}
	if lower, err := c.count(ctx, cp.Expr, false); err != nil {
		return Instance{}, false, err
	} else if lower > g.cfg.MaxTruth {
		st.PrunedOversized++
		return Instance{}, false, nil
	}
	res := c.ExecuteCompiled(ctx, []*Compiled{cp})[0]
	if res.Err != nil {
		return Instance{}, false, res.Err
	}
	switch {
	case res.Total == 0:
		st.DroppedEmpty++
		return Instance{}, false, nil
	case res.Total > g.cfg.MaxTruth || res.Total > len(res.IDs):
		st.DroppedOversized++
		return Instance{}, false, nil
	}
	var goldIDs []string
	for _, r := range gold {
		id := c.ID(r)
		if !slices.Contains(res.IDs, id) {
			st.DroppedGold++
			return Instance{}, false, nil
		}
		if !slices.Contains(goldIDs, id) {
			goldIDs = append(goldIDs, id)
		}
	}
	mod := mods[0]
	if len(mods) > 1 {
		mod = "hybrid"
	}
	inst := Instance{Collection: c.Meta.Schema.Name, Level: level, NumLeaves: n, NumGroups: len(groups), Pattern: pattern,
		Modalities: mods, Modality: mod, Program: prog, Gold: goldIDs, Truth: slices.Clone(res.IDs)}
	for _, l := range leaves {
		inst.Leaves = append(inst.Leaves, l.leaf)
	}
	return inst, true, nil
}

func seq(lo, hi int) []int {
	var s []int
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func findInSet(e Expr) *InSet {
	switch x := e.(type) {
	case *InSet:
		return x
	case *Not:
		return findInSet(x.X)
	}
	return nil
}

// count runs the structural-only query (placeholders replaced by val).
func (c *Collection) count(ctx context.Context, e Expr, val bool) (int, error) {
	q, args := structuralSQL(e, val)
	var n int
	if err := c.db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("hybrid: sqlite: %w", err)
	}
	return n, nil
}

// ground makes one leaf satisfied by the gold row (positive) or violated
// by it and negated (so that the gold row satisfies the negation).
func (g *generator) ground(ctx context.Context, gold int32, neg bool) (gleaf, bool, error) {
	c, s := g.c, g.c.Meta.Schema
	var textFields []int
	for i := range s.Text {
		if len(strings.Fields(c.texts[i][gold])) >= 2 {
			textFields = append(textFields, i)
		}
	}
	if len(textFields) > 0 && g.rng.Float64() < g.cfg.TextProb {
		fi := textFields[g.rng.IntN(len(textFields))]
		l, ok, err := g.groundText(ctx, fi, gold, neg)
		if err != nil || ok {
			return l, ok, err
		}
	}
	var cols []int
	for i, col := range s.Columns {
		if col.Role != "" && c.cells[gold][i].Kind != 0 {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 {
		return gleaf{}, false, nil
	}
	ci := cols[g.rng.IntN(len(cols))]
	col := s.Columns[ci]
	v := c.cells[gold][ci]
	op := Operand{Column: col.Name}
	if col.Role == RoleCategorical {
		if v.Kind != ValString {
			return gleaf{}, false, nil
		}
		if !neg {
			return gleaf{expr: &Cmp{Left: op, Op: "=", Right: Value{Kind: ValString, S: v.S}},
				leaf: Leaf{Field: col.Name, Kind: RoleCategorical}}, true, nil
		}
		// A violating value: another row's value of the column.
		for range 20 {
			o := c.cells[g.rng.IntN(c.Len())][ci]
			if o.Kind == ValString && o.S != v.S {
				return gleaf{expr: &Cmp{Left: op, Op: "!=", Right: Value{Kind: ValString, S: o.S}},
					leaf: Leaf{Field: col.Name, Kind: RoleCategorical, Negated: true}}, true, nil
			}
		}
		return gleaf{}, false, nil
	}
	x := v.F
	if v.Kind == ValInt {
		x = float64(v.I)
	}
	down, up := math.Floor(x), math.Ceil(x)
	if x == down {
		down, up = x-float64(g.rng.IntN(3)), x+float64(g.rng.IntN(3))
	}
	num := func(f float64) Value {
		if col.Type == TypeInteger {
			return Value{Kind: ValInt, I: int64(f)}
		}
		return Value{Kind: ValReal, F: f}
	}
	leaf := Leaf{Field: col.Name, Kind: RoleNumeric, Negated: neg}
	if !neg {
		var e Expr
		switch g.rng.IntN(4) {
		case 0:
			e = &Cmp{Left: op, Op: ">=", Right: num(down)}
		case 1:
			e = &Cmp{Left: op, Op: "<=", Right: num(up)}
		case 2:
			e = &Between{Left: op, Lo: num(down), Hi: num(up)}
		default:
			if col.Type == TypeInteger {
				e = &Cmp{Left: op, Op: "=", Right: num(x)}
			} else {
				e = &Cmp{Left: op, Op: "<", Right: num(up + 1)}
			}
		}
		return gleaf{expr: e, leaf: leaf}, true, nil
	}
	// Negated: a comparison the gold violates, wrapped in NOT.
	var e Expr
	if g.rng.IntN(2) == 0 {
		e = &Cmp{Left: op, Op: ">", Right: num(up)}
	} else {
		e = &Cmp{Left: op, Op: "<", Right: num(down)}
	}
	return gleaf{expr: &Not{X: e}, leaf: leaf}, true, nil
}

// stopwords are skipped when drawing phrases (Lucene's English set plus a
// few e-mail and catalogue fillers).
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such that the their
		then there these they this to was will with from have has had you your our we i re fw fwd cc subject sent
		thanks please would could should can may just also been were which what when who about more new`) {
		stopwords[w] = true
	}
}

// groundText draws a 2–4 word phrase from the row's field text (the
// paper extracts it with an LLM) and keeps it when the gold row is in
// (positive) or out of (negated: phrase from another row) the field's
// top-K for that phrase.
func (g *generator) groundText(ctx context.Context, fi int, gold int32, neg bool) (gleaf, bool, error) {
	c := g.c
	name := c.Meta.Schema.Text[fi].Name
	for range 4 {
		src := gold
		if neg {
			src = int32(g.rng.IntN(c.Len()))
			if src == gold || strings.TrimSpace(c.texts[fi][src]) == "" {
				continue
			}
		}
		phrase := g.phrase(c.texts[fi][src])
		if phrase == "" {
			continue
		}
		r := Retrieval{Type: "text", Field: name, Query: phrase}
		lists, err := c.search(ctx, c.text[fi], false, name, []Retrieval{r})
		if err != nil {
			return gleaf{}, false, err
		}
		if slices.Contains(lists[0], gold) == neg {
			continue
		}
		return gleaf{expr: &InSet{Column: c.Meta.Schema.ID, Negate: neg, Kind: "text"}, ret: &r,
			leaf: Leaf{Field: name, Kind: "text", Negated: neg}}, true, nil
	}
	return gleaf{}, false, nil
}

func (g *generator) phrase(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var content []string
	for _, w := range words {
		lw := strings.ToLower(w)
		if len(lw) >= 3 && !stopwords[lw] && len(lw) <= 30 {
			content = append(content, lw)
		}
	}
	if len(content) < 2 {
		return ""
	}
	if len(content) > 400 {
		content = content[:400]
	}
	n := 2 + g.rng.IntN(3)
	n = min(n, len(content))
	start := g.rng.IntN(len(content) - n + 1)
	return strings.Join(content[start:start+n], " ")
}

// NegateLeaf returns a copy of p with its i-th leaf (in order of
// appearance, 0-based) negated: NOT IN becomes IN and back, any other
// leaf is wrapped in NOT (...). Placeholder numbering is unchanged. It is
// the mutation used to show that a wrong program scores lower.
func NegateLeaf(s *Schema, p Program, i int) (Program, error) {
	cp, err := Compile(s, p, Limits{})
	if err != nil {
		return Program{}, err
	}
	n := 0
	var done bool
	var walk func(e Expr) Expr
	walk = func(e Expr) Expr {
		switch x := e.(type) {
		case *Logic:
			args := make([]Expr, len(x.Args))
			for j, a := range x.Args {
				args[j] = walk(a)
			}
			return &Logic{Op: x.Op, Args: args, At: x.At}
		case *Not:
			if isLeaf(x.X) {
				if n == i {
					n++
					done = true
					return x.X
				}
				n++
				return x
			}
			return &Not{X: walk(x.X), At: x.At}
		case *InSet:
			if n == i {
				done = true
				y := *x
				y.Negate = !y.Negate
				n++
				return &y
			}
		}
		if n == i {
			done = true
			n++
			return &Not{X: e}
		}
		n++
		return e
	}
	out := walk(cp.Expr)
	if !done {
		return Program{}, fmt.Errorf("hybrid: program has %d leaves, no leaf %d", n, i)
	}
	return Program{SQL: "WHERE " + Format(out), RetrievalList: p.RetrievalList}, nil
}

func isLeaf(e Expr) bool {
	switch e.(type) {
	case *Logic, *Not:
		return false
	}
	return true
}
