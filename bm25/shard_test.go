package bm25

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// buildShards builds texts split by plan and opens every kept shard (nil
// for the others).
func buildShards(t testing.TB, cfg Config, plan ShardPlan, texts []string) []*Index {
	shards, _ := buildShardFiles(t, cfg, plan, texts)
	return shards
}

// buildShardFiles is buildShards that also returns the files' paths.
func buildShardFiles(t testing.TB, cfg Config, plan ShardPlan, texts []string) ([]*Index, []string) {
	t.Helper()
	bd, err := NewShardBuilder(cfg, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer bd.Abort()
	for i, s := range texts {
		if row, err := bd.Add(s); err != nil || row != int32(i) {
			t.Fatalf("Add #%d = %d, %v; want row %d", i, row, err, i)
		}
	}
	dir := t.TempDir()
	paths := make([]string, plan.Shards())
	for i := range paths {
		if plan.keep(i) {
			paths[i] = filepath.Join(dir, fmt.Sprintf("shard-%d.bm25", i))
		}
	}
	if err := bd.WriteShards(paths); err != nil {
		t.Fatal(err)
	}
	out := make([]*Index, len(paths))
	for i, p := range paths {
		if p == "" {
			continue
		}
		ix, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ix.Close() })
		out[i] = ix
	}
	return out, paths
}

// mergeShards is the oracle merge: every shard's hits with their corpus
// rows, sorted by rlsearch.CompareHits, cut to k.
func mergeShards(t testing.TB, shards []*Index, q string, k int) []rlsearch.Hit {
	t.Helper()
	var all []rlsearch.Hit
	for _, ix := range shards {
		hits, err := ix.SearchErr(q, k)
		if err != nil {
			t.Fatalf("shard search %q: %v", q, err)
		}
		first := int32(ix.Shard().FirstRow)
		for _, h := range hits {
			all = append(all, rlsearch.Hit{Row: first + h.Row, Score: h.Score})
		}
	}
	slices.SortFunc(all, rlsearch.CompareHits)
	if len(all) == 0 {
		return nil
	}
	return all[:min(k, len(all))]
}

// checkShardsEqualOne compares, for every query and k, the merged shards
// with the unsharded index: same corpus rows, same order, bit-identical
// float32 scores.
func checkShardsEqualOne(t *testing.T, one *Index, shards []*Index, queries []string, ks []int) {
	t.Helper()
	matched := 0
	for qi, q := range queries {
		for _, k := range ks {
			want, err := one.SearchErr(q, k)
			if err != nil {
				t.Fatal(err)
			}
			if k == ks[0] && len(want) > 0 {
				matched++
			}
			if got := mergeShards(t, shards, q, k); !sameHits(got, want) {
				t.Fatalf("query %d %q k=%d: %d merged shards differ from one index\n got %v\nwant %v", qi, q, k, len(shards), head(got), head(want))
			}
		}
	}
	if matched < len(queries)/2 {
		t.Errorf("only %d of %d queries match: the test queries are too weak", matched, len(queries))
	}
}

// TestShardsEqualOneIndexWiki splits wiki_multihop into 1 to 7 shards
// (even and uneven) and compares the merged results of every question and
// 5,000 random queries with the unsharded index at k 1, 3, 10, 100.
func TestShardsEqualOneIndexWiki(t *testing.T) {
	w := loadWiki(t)
	one := buildAndOpen(t, Config{}, w.contents)
	queries := make([]string, 0, len(w.questions)+5000)
	for _, q := range w.questions {
		queries = append(queries, q.Question)
	}
	queries = append(queries, randomQueries(rand.New(rand.NewPCG(24, 1)), w.contents, 5000)...)
	n := len(w.contents)
	plans := map[string][]int32{
		"1":        {0, int32(n)},
		"4-uneven": {0, 1, 17, int32(n) / 2, int32(n)},
	}
	for _, s := range []int{2, 3, 7} {
		b, err := EvenBounds(n, s)
		if err != nil {
			t.Fatal(err)
		}
		plans[fmt.Sprint(s)] = b
	}
	for name, bounds := range plans {
		t.Run("shards="+name, func(t *testing.T) {
			shards := buildShards(t, Config{TempDir: t.TempDir()}, ShardPlan{Bounds: bounds}, w.contents)
			for i, ix := range shards {
				info := ix.Shard()
				if !info.Sharded || info.FirstRow != int(bounds[i]) || info.TotalRows != n || ix.NumDocs() != int(bounds[i+1]-bounds[i]) {
					t.Fatalf("shard %d: info %+v with %d rows, want rows [%d, %d) of %d", i, info, ix.NumDocs(), bounds[i], bounds[i+1], n)
				}
				if ix.AvgDocLen() != one.AvgDocLen() {
					t.Fatalf("shard %d: avgdl %v, one index %v: the shard must score with the corpus's", i, ix.AvgDocLen(), one.AvgDocLen())
				}
				if err := ix.Check(); err != nil {
					t.Fatalf("shard %d: %v", i, err)
				}
			}
			step := 1
			if raceEnabled || name != "4-uneven" {
				step = 10 // the full set on one plan; every 10th query on the others
			}
			if raceEnabled {
				step = 40
			}
			var qs []string
			for i := 0; i < len(queries); i += step {
				qs = append(qs, queries[i])
			}
			checkShardsEqualOne(t, one, shards, qs, []int{1, 3, 10, 100})
		})
	}
}

// TestShardsEqualOneIndexSynthetic runs the comparison without the shared
// data, with several BM25 parameters, long documents (escaped norm slots,
// tfs of 255 and more) and shards of one row.
func TestShardsEqualOneIndexSynthetic(t *testing.T) {
	for _, p := range []struct{ k1, b float64 }{{0.9, 0.4}, {0, 0.5}, {2, 0}, {1.2, 1}} {
		t.Run(fmt.Sprintf("k1=%g/b=%g", p.k1, p.b), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(p.k1*10)+24, uint64(p.b*10)))
			texts := make([]string, 1500)
			for i := range texts {
				texts[i] = randomText(r, 40)
				if i%97 == 0 {
					texts[i] = strings.Repeat("zebra ", 300) + randomText(r, 5000)
				}
				if i%31 == 0 {
					texts[i] = "" // no term: still a row
				}
			}
			cfg := litConfig(p.k1, p.b)
			one := buildAndOpen(t, cfg, texts)
			bounds := []int32{0, 1, 2, 700, 1499, 1500}
			shards := buildShards(t, cfg, ShardPlan{Bounds: bounds}, texts)
			checkShardsEqualOne(t, one, shards, sample(randomQueries(r, texts, 400), 4), []int{1, 3, 10, 100, 2000})
		})
	}
}

// TestShardFileIndependentOfKeep: a shard built alone (the other shards'
// rows only counted) is byte for byte the file of the all-shards build,
// whatever the memory budget (spilled runs with unwritten rows' counts).
func TestShardFileIndependentOfKeep(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 24))
	texts := make([]string, 12*batchDocs)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	bounds, err := EvenBounds(len(texts), 3)
	if err != nil {
		t.Fatal(err)
	}
	build := func(cfg Config, keep []bool) [][]byte {
		bd, err := NewShardBuilder(cfg, ShardPlan{Bounds: bounds, Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			if _, err := bd.Add(s); err != nil {
				t.Fatal(err)
			}
		}
		dir := t.TempDir()
		paths := make([]string, 3)
		for i := range paths {
			if keep == nil || keep[i] {
				paths[i] = filepath.Join(dir, fmt.Sprint(i))
			}
		}
		if err := bd.WriteShards(paths); err != nil {
			t.Fatal(err)
		}
		out := make([][]byte, 3)
		for i, p := range paths {
			if p != "" {
				if out[i], err = os.ReadFile(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		return out
	}
	want := build(Config{}, nil)
	for _, c := range []struct {
		cfg  Config
		keep []bool
	}{
		{Config{}, []bool{false, true, false}},
		{Config{MemoryBudget: 1, Workers: 2, TempDir: t.TempDir()}, []bool{true, false, false}},
		{Config{MemoryBudget: 32 << 10, TempDir: t.TempDir()}, []bool{false, false, true}},
		{Config{MemoryBudget: 1, TempDir: t.TempDir()}, nil},
	} {
		got := build(c.cfg, c.keep)
		for i := range got {
			if got[i] != nil && !slices.Equal(got[i], want[i]) {
				t.Errorf("keep %v budget %d: shard %d differs from the all-shards build (%d vs %d bytes)", c.keep, c.cfg.MemoryBudget, i, len(got[i]), len(want[i]))
			}
		}
		if c.cfg.TempDir != "" {
			if ents, _ := os.ReadDir(c.cfg.TempDir); len(ents) != 0 {
				t.Errorf("keep %v: %d files left in TempDir", c.keep, len(ents))
			}
		}
	}
}

func TestShardPlanErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		plan ShardPlan
		want string
	}{
		{"no bounds", ShardPlan{}, "0 bounds"},
		{"one bound", ShardPlan{Bounds: []int32{0}}, "1 bounds"},
		{"not from 0", ShardPlan{Bounds: []int32{1, 5}}, "Bounds[0] = 1"},
		{"empty shard", ShardPlan{Bounds: []int32{0, 3, 3}}, "Bounds[2] = 3 is not above"},
		{"keep length", ShardPlan{Bounds: []int32{0, 3}, Keep: []bool{true, true}}, "Keep has 2 entries for 1 shards"},
		{"keep none", ShardPlan{Bounds: []int32{0, 3, 4}, Keep: []bool{false, false}}, "writes no shard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewShardBuilder(Config{}, c.plan)
			if !errors.Is(err, ErrShardPlan) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewShardBuilder: err %v, want ErrShardPlan saying %q", err, c.want)
			}
		})
	}
	for _, c := range []struct{ rows, n int }{{5, 0}, {5, 6}, {0, 1}, {10, MaxShards + 1}} {
		if _, err := EvenBounds(c.rows, c.n); !errors.Is(err, ErrShardPlan) {
			t.Errorf("EvenBounds(%d, %d): err %v, want ErrShardPlan", c.rows, c.n, err)
		}
	}
	if b, err := EvenBounds(10, 3); err != nil || !slices.Equal(b, []int32{0, 3, 6, 10}) {
		t.Errorf("EvenBounds(10, 3) = %v, %v; want [0 3 6 10]", b, err)
	}

	add := func(bd *Builder, n int) {
		for range n {
			bd.Add("a b c")
		}
	}
	// Too few rows, too many rows, paths that do not match the plan.
	bd, _ := NewShardBuilder(Config{}, ShardPlan{Bounds: []int32{0, 2, 4}})
	add(bd, 3)
	dir := t.TempDir()
	paths := []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}
	if err := bd.WriteShards(paths); !errors.Is(err, ErrShardPlan) || !strings.Contains(err.Error(), "3 rows added, the plan holds 4") {
		t.Errorf("3 of 4 rows: err %v, want ErrShardPlan naming the counts", err)
	}
	bd, _ = NewShardBuilder(Config{}, ShardPlan{Bounds: []int32{0, 2, 4}})
	add(bd, 4)
	if _, err := bd.Add("one more"); !errors.Is(err, ErrShardPlan) {
		t.Errorf("row beyond the plan: err %v, want ErrShardPlan", err)
	}
	if err := bd.WriteFile(filepath.Join(dir, "x")); !errors.Is(err, ErrShardPlan) {
		t.Errorf("WriteFile on a shard builder: err %v, want ErrShardPlan", err)
	}
	bd, _ = NewShardBuilder(Config{}, ShardPlan{Bounds: []int32{0, 2, 4}, Keep: []bool{true, false}})
	add(bd, 4)
	if err := bd.WriteShards(paths); !errors.Is(err, ErrShardPlan) || !strings.Contains(err.Error(), "shard 1") {
		t.Errorf("path for an unkept shard: err %v, want ErrShardPlan naming shard 1", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed WriteShards left %d files", len(ents))
	}
	nb, _ := NewBuilder(Config{})
	if err := nb.WriteShards(paths); !errors.Is(err, ErrShardPlan) {
		t.Errorf("WriteShards on an unsharded builder: err %v, want ErrShardPlan", err)
	}
}

// shardIndexBytes is a small two-shard build's second file.
func shardIndexBytes(t testing.TB) []byte {
	t.Helper()
	texts := []string{"the cat sat on the mat", "", "dogs and cats", "日本 👍 dog's", "cat cat cat"}
	_, paths := buildShardFiles(t, Config{K1: 1.2, B: 0.75}, ShardPlan{Bounds: []int32{0, 2, 5}}, texts)
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestShardDamage: a changed global df is caught by the section checksum
// at Open and, with the checksum forged, by Check; the header's
// corpus-wide counts are checked against the shard's.
func TestShardDamage(t *testing.T) {
	good := shardIndexBytes(t)
	if _, err := parse(good, true); err != nil {
		t.Fatal(err)
	}
	gdfOff := len(good) - 4 // the last term's global df
	bad := slices.Clone(good)
	le.PutUint32(bad[gdfOff:], 4000)
	if _, err := parse(bad, true); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "global dfs") {
		t.Errorf("changed global df: err %v, want ErrCorrupt naming the global dfs", err)
	}
	ix, err := parse(bad, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Check(); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "corpus-wide df 4000") {
		t.Errorf("Check of a df above the corpus's documents: err %v, want ErrCorrupt", err)
	}
	for _, c := range []struct {
		off  int
		val  uint32
		want string
	}{
		{76, 4, "beyond the corpus"}, // first row 4 + 3 rows > 5
		{80, 2, "beyond the corpus"}, // 2 corpus rows < 3 shard rows
		{84, 1, "cannot hold"},       // corpus docCount below the shard's
	} {
		b := slices.Clone(good)
		le.PutUint32(b[c.off:], c.val)
		if _, err := parse(b, false); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("header offset %d = %d: err %v, want ErrCorrupt saying %q", c.off, c.val, err, c.want)
		}
	}
}
