package bm25

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// diffKs are the k of the pruned-versus-exhaustive differential tests.
var diffKs = []int{1, 3, 10, 100, 1000}

// genTopicalCorpus generates n passages that look like the seed passages:
// each picks a seed passage, takes the length (in words) of a random seed
// passage, and draws about 70% of its words from the picked passage and
// 30% from the global unigram distribution of the seeds. Deterministic for
// a seed.
func genTopicalCorpus(n int, seed int64, seeds []string) []string {
	g := newTopicalGen(seed, seeds)
	out := make([]string, n)
	for i := range out {
		out[i] = g.next()
	}
	return out
}

// topicalGen streams genTopicalCorpus's passages.
type topicalGen struct {
	r     *rand.Rand
	words [][]string
	b     strings.Builder
}

func newTopicalGen(seed int64, seeds []string) *topicalGen {
	g := &topicalGen{r: rand.New(rand.NewPCG(uint64(seed), 0x70b1ca1))}
	for _, s := range seeds {
		if w := strings.Fields(s); len(w) > 0 {
			g.words = append(g.words, w)
		}
	}
	return g
}

func (g *topicalGen) next() string {
	if len(g.words) == 0 {
		return ""
	}
	r, words := g.r, g.words
	topic := words[r.IntN(len(words))]
	l := len(words[r.IntN(len(words))])
	g.b.Reset()
	for j := range l {
		if j > 0 {
			g.b.WriteByte(' ')
		}
		if r.Float64() < 0.7 {
			g.b.WriteString(topic[r.IntN(len(topic))])
		} else {
			w := words[r.IntN(len(words))] // a random token of a random passage
			g.b.WriteString(w[r.IntN(len(w))])
		}
	}
	return g.b.String()
}

// randomQueries draws n seeded queries of 1-40 words: words from the corpus
// (as frequent as in it, or uniform over distinct words), stop-word-only
// queries, repeated words and absent words, and mixes of these.
func randomQueries(r *rand.Rand, texts []string, n int) []string {
	var tokens []string
	for i := 0; i < len(texts) && len(tokens) < 2_000_000; i += max(1, len(texts)/20000) {
		tokens = append(tokens, strings.Fields(texts[i])...)
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(tokens)))
	stops := make([]string, 0, len(stopWords))
	for w := range stopWords {
		stops = append(stops, w)
	}
	slices.Sort(stops)
	word := func(kind int) string {
		switch kind {
		case 0:
			return stops[r.IntN(len(stops))]
		case 1:
			return fmt.Sprintf("zqx%dabsent", r.IntN(1000))
		case 2:
			return distinct[r.IntN(len(distinct))]
		default:
			return tokens[r.IntN(len(tokens))]
		}
	}
	out := make([]string, n)
	for i := range out {
		m := 1 + r.IntN(40)
		if r.IntN(2) == 0 {
			m = 1 + r.IntN(8) // short queries are the common case
		}
		style := r.IntN(6)
		var q []string
		for len(q) < m {
			switch style {
			case 0: // stop words only
				q = append(q, word(0))
			case 1: // absent words, sometimes with a real one
				q = append(q, word(1+2*r.IntN(2)*r.IntN(2)))
			case 2: // repeated words
				w := word(3)
				for range 1 + r.IntN(4) {
					q = append(q, w)
				}
			case 3: // rare words
				q = append(q, word(2))
			case 4: // frequent words
				q = append(q, word(3))
			default: // mixed
				q = append(q, word(r.IntN(4)))
			}
		}
		out[i] = strings.Join(q[:m], " ")
	}
	return out
}

// checkPrunedEqualsExhaustive compares Search with the exhaustive oracle for
// every query and every k in diffKs: same rows, same order, bit-identical
// float32 scores.
func checkPrunedEqualsExhaustive(t *testing.T, ix *Index, queries []string) {
	t.Helper()
	kmax := slices.Max(diffKs)
	matched := 0
	for qi, q := range queries {
		all, err := ix.searchOracle(q, kmax)
		if err != nil {
			t.Fatalf("oracle query %d %q: %v", qi, q, err)
		}
		if len(all) > 0 {
			matched++
		}
		for _, k := range diffKs {
			want := all[:min(k, len(all))]
			if len(want) == 0 {
				want = nil
			}
			got, err := ix.searchPruned(q, k)
			if err != nil {
				t.Fatalf("query %d %q k=%d: %v", qi, q, k, err)
			}
			if !sameHits(got, want) {
				t.Fatalf("query %d %q k=%d: pruned search differs from exhaustive\n got %v\nwant %v", qi, q, k, head(got), head(want))
			}
			if qi%4 == 0 { // intra-query parallel ranges, on a quarter of the queries
				parts := 2 + qi%5
				got, err := ix.SearchWith(q, k, SearchOptions{Parallel: parts})
				if err != nil || !sameHits(got, want) {
					t.Fatalf("query %d %q k=%d: SearchWith Parallel=%d differs from exhaustive (err %v)\n got %v\nwant %v", qi, q, k, parts, err, head(got), head(want))
				}
			}
		}
	}
	if matched < len(queries)/2 {
		t.Errorf("only %d of %d queries match any row: the test queries are too weak", matched, len(queries))
	}
	checkNormSlots(t, ix)
}

// checkNormSlots checks that the norm slots the postings carry give every
// row's normInv bit for bit through Index.normVals, unless escaped, and
// returns the number of escaped rows.
func checkNormSlots(t *testing.T, ix *Index) (escaped int) {
	t.Helper()
	for d, v := range ix.normInv {
		sl := ix.slots.slot(uint32(ix.DocLen(int32(d))))
		if sl == normEscape {
			escaped++
			continue
		}
		if got := ix.normVals[sl]; math.Float32bits(got) != math.Float32bits(v) {
			t.Fatalf("row %d: norm of slot %d is %g, normInv %g", d, sl, got, v)
		}
	}
	if err := ix.Check(); err != nil { // every posting's slot is its row's
		t.Fatal(err)
	}
	return escaped
}

// TestPrunedEqualsExhaustiveManyLengths has more than 255 distinct
// document lengths, so some rows' norms are escaped to normInv in the
// pruned search (and rows of 4096 terms or more, which never get a slot).
func TestPrunedEqualsExhaustiveManyLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(300, 7))
	texts := make([]string, 4000)
	for i := range texts {
		texts[i] = randomText(r, 600)
		if i%500 == 7 { // some rows past slotMaxLen terms (stop words aside)
			texts[i] = randomText(r, 3*slotMaxLen) + " " + randomText(r, 3*slotMaxLen)
		}
	}
	ix := buildAndOpen(t, Config{}, texts)
	long := 0
	for d := range ix.NumDocs() {
		if ix.DocLen(int32(d)) >= slotMaxLen {
			long++
		}
	}
	if long == 0 {
		t.Fatalf("no row of %d terms or more", slotMaxLen)
	}
	checkPrunedEqualsExhaustive(t, ix, sample(randomQueries(r, texts, 400), 4))
	if e := checkNormSlots(t, ix); e < 100 {
		t.Fatalf("%d rows with lengths up to 600 words: %d escaped norms, want many", ix.NumDocs(), e)
	}
}

func TestNormSlotsSmall(t *testing.T) {
	ix := buildAndOpen(t, Config{}, []string{"alpha beta", "alpha", "", "gamma gamma gamma alpha"})
	if e := checkNormSlots(t, ix); e != 0 {
		t.Fatalf("4 rows of 3 lengths: %d escaped norms, want 0", e)
	}
}

func sameHits(a, b []rlsearch.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Row != b[i].Row || math.Float32bits(a[i].Score) != math.Float32bits(b[i].Score) {
			return false
		}
	}
	return true
}

func head(h []rlsearch.Hit) []rlsearch.Hit { return h[:min(len(h), 12)] }

// sample keeps every step-th query under -race, where the full runs take
// too long; without -race it keeps all.
func sample(qs []string, step int) []string {
	if !raceEnabled {
		return qs
	}
	var out []string
	for i := 0; i < len(qs); i += step {
		out = append(out, qs[i])
	}
	return out
}

func TestPrunedEqualsExhaustiveWiki(t *testing.T) {
	w := loadWiki(t)
	ix := buildAndOpen(t, Config{TempDir: t.TempDir()}, w.contents)
	queries := make([]string, 0, len(w.questions)+5000)
	for _, q := range w.questions {
		queries = append(queries, q.Question)
	}
	queries = append(queries, randomQueries(rand.New(rand.NewPCG(18175, 1)), w.contents, 5000)...)
	checkPrunedEqualsExhaustive(t, ix, sample(queries, 25))
}

func TestPrunedEqualsExhaustiveGenerated200k(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200k-passage corpus")
	}
	w := loadWiki(t)
	n := 200_000
	if raceEnabled {
		n = 40_000
	}
	texts := genTopicalCorpus(n, 42, w.contents)
	ix := buildAndOpen(t, Config{TempDir: t.TempDir()}, texts)
	if err := ix.Check(); err != nil {
		t.Fatal(err)
	}
	queries := make([]string, 0, len(w.questions)+5000)
	for _, q := range w.questions {
		queries = append(queries, q.Question)
	}
	queries = append(queries, randomQueries(rand.New(rand.NewPCG(200_000, 2)), texts, 5000)...)
	checkPrunedEqualsExhaustive(t, ix, sample(queries, 50))
}

// TestPrunedEqualsExhaustiveSynthetic runs the differential test on small
// corpora with skewed term frequencies and several BM25 parameters (k1 = 0
// makes every block bound equal, b = 0 ignores lengths), without the
// shared data.
func TestPrunedEqualsExhaustiveSynthetic(t *testing.T) {
	for i, p := range []struct{ k1, b float64 }{{0.9, 0.4}, {0, 0.5}, {2, 0}, {1.2, 1}} {
		t.Run(fmt.Sprintf("k1=%g/b=%g", p.k1, p.b), func(t *testing.T) {
			if i%2 == 1 {
			}
			r := rand.New(rand.NewPCG(uint64(p.k1*10), uint64(p.b*10)))
			texts := make([]string, 3000)
			for i := range texts {
				texts[i] = randomText(r, 40)
			}
			ix := buildAndOpen(t, litConfig(p.k1, p.b), texts)
			checkPrunedEqualsExhaustive(t, ix, sample(randomQueries(r, texts, 300), 5))
		})
	}
}

// TestSpillMergeIdentical builds the same texts with the default budget and
// with a tiny one that spills after every analysis batch (more runs than
// maxOpenRuns, so runs are also compacted): the files must be identical.
func TestSpillMergeIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	n := 70 * batchDocs // > maxOpenRuns runs: compaction too
	if raceEnabled {
		n = 3 * batchDocs
	}
	texts := make([]string, n)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	build := func(cfg Config) []byte {
		bd, err := NewBuilder(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			if _, err := bd.Add(s); err != nil {
				t.Fatal(err)
			}
		}
		return writeBytes(t, bd)
	}
	want := build(Config{})
	for _, cfg := range []Config{
		{MemoryBudget: 1, Workers: 1, TempDir: t.TempDir()},
		{MemoryBudget: 1, Workers: 3, TempDir: t.TempDir()},
		{MemoryBudget: 64 << 10, TempDir: t.TempDir()},
	} {
		if got := build(cfg); !slices.Equal(got, want) {
			t.Errorf("budget %d workers %d: file differs from the in-memory build (%d vs %d bytes)", cfg.MemoryBudget, cfg.Workers, len(got), len(want))
		}
		if ents, _ := os.ReadDir(cfg.TempDir); len(ents) != 0 {
			t.Errorf("budget %d: %d files left in TempDir after WriteFile", cfg.MemoryBudget, len(ents))
		}
	}
}

// TestBuilderLeavesNoTempFiles: Abort and failed builds remove every run
// and side file.
func TestBuilderLeavesNoTempFiles(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	texts := make([]string, 4*batchDocs)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	empty := func(t *testing.T, dirs ...string) {
		t.Helper()
		for _, d := range dirs {
			if ents, _ := os.ReadDir(d); len(ents) != 0 {
				t.Errorf("%d entries left in %s (first %s)", len(ents), d, ents[0].Name())
			}
		}
	}
	add := func(t *testing.T, bd *Builder) error {
		for _, s := range texts {
			if _, err := bd.Add(s); err != nil {
				return err
			}
		}
		return nil
	}
	t.Run("abort after spills", func(t *testing.T) {
		tmp := t.TempDir()
		bd, _ := NewBuilder(Config{MemoryBudget: 1, TempDir: tmp})
		if err := add(t, bd); err != nil {
			t.Fatal(err)
		}
		bd.stop() // wait for the spills
		if len(bd.runs) == 0 {
			t.Fatal("no run spilled with a 1-byte budget")
		}
		bd.Abort()
		bd.Abort()
		empty(t, tmp)
		if _, err := bd.Add("x"); !errors.Is(err, ErrBuilderDone) {
			t.Errorf("Add after Abort: %v, want ErrBuilderDone", err)
		}
	})
	t.Run("write into a missing directory", func(t *testing.T) {
		tmp, out := t.TempDir(), t.TempDir()
		bd, _ := NewBuilder(Config{MemoryBudget: 1, TempDir: tmp})
		if err := add(t, bd); err != nil {
			t.Fatal(err)
		}
		if err := bd.WriteFile(filepath.Join(out, "missing", "ix.bm25")); err == nil {
			t.Fatal("WriteFile into a missing directory succeeded")
		}
		empty(t, tmp, out)
	})
	t.Run("missing temp dir", func(t *testing.T) {
		out := t.TempDir()
		bd, _ := NewBuilder(Config{MemoryBudget: 1, TempDir: filepath.Join(out, "missing")})
		err := add(t, bd)
		if err == nil {
			err = bd.WriteFile(filepath.Join(out, "ix.bm25"))
		}
		if err == nil {
			t.Fatal("build with a missing TempDir succeeded")
		}
		bd.Abort()
		empty(t, out)
	})
}
