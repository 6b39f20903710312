package bm25

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// vocab mixes stemmable words, stop words and a possessive so that the
// analyzer is exercised by the differential tests.
var vocab = strings.Fields("alpha beta gamma delta running runs runner cats cat the of and a bob's zeta eta theta iota kappa lambda mu 42 3.14 日 本")

func randomText(r *rand.Rand, maxWords int) string {
	n := r.IntN(maxWords + 1)
	w := make([]string, n)
	for i := range w {
		// Zipf-like: small indexes far more often.
		w[i] = vocab[min(len(vocab)-1, int(r.ExpFloat64()*4))]
	}
	return strings.Join(w, " ")
}

// refScores is the naive oracle: it recomputes BM25 from the raw token
// lists of every document, with no index, in the same float32 steps as
// Lucene (and therefore as the index), summing terms in sorted order.
func refScores(docs [][]string, query string, k1, b float32) map[int32]float32 {
	var docCount uint32
	var sum uint64
	df := map[string]uint32{}
	for _, toks := range docs {
		if len(toks) > 0 {
			docCount++
		}
		sum += uint64(len(toks))
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	var avgdl float32
	if docCount > 0 {
		avgdl = float32(float64(sum) / float64(docCount))
	}
	qcount := map[string]int{}
	for _, t := range Analyze(query) {
		qcount[t]++
	}
	terms := make([]string, 0, len(qcount))
	for t := range qcount {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	scores := map[int32]float32{}
	for _, t := range terms {
		if df[t] == 0 {
			continue
		}
		idf := float32(math.Log(1 + (float64(docCount)-float64(df[t])+0.5)/(float64(df[t])+0.5)))
		w := float32(qcount[t]) * idf
		for d, toks := range docs {
			tf := 0
			for _, x := range toks {
				if x == t {
					tf++
				}
			}
			if tf == 0 {
				continue
			}
			ninv := 1 / (k1 * ((1 - b) + b*float32(len(toks))/avgdl))
			scores[int32(d)] += w - w/(1+float32(tf)*ninv)
		}
	}
	return scores
}

// textbook is the BM25 formula of the package doc in float64, to check
// that the float32 Lucene rewrite computes the same quantity.
func textbook(docs [][]string, query string, k1, b float64) map[int32]float64 {
	var n, sum float64
	df := map[string]float64{}
	for _, toks := range docs {
		if len(toks) > 0 {
			n++
		}
		sum += float64(len(toks))
		seen := map[string]bool{}
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	out := map[int32]float64{}
	for _, qt := range Analyze(query) { // each occurrence counts once: bag of words
		if df[qt] == 0 {
			continue
		}
		idf := math.Log(1 + (n-df[qt]+0.5)/(df[qt]+0.5))
		for d, toks := range docs {
			var tf float64
			for _, x := range toks {
				if x == qt {
					tf++
				}
			}
			if tf > 0 {
				out[int32(d)] += idf * tf / (tf + k1*(1-b+b*float64(len(toks))/(sum/n)))
			}
		}
	}
	return out
}

func refTopK(scores map[int32]float32, k int) []rlsearch.Hit {
	var hits []rlsearch.Hit
	for d, s := range scores {
		hits = append(hits, rlsearch.Hit{Row: d, Score: s})
	}
	slices.SortFunc(hits, cmpHit)
	if len(hits) > k {
		hits = hits[:k]
	}
	if k <= 0 || len(hits) == 0 {
		return nil
	}
	return hits
}

// buildAndOpen builds texts with cfg, writes the index to a temp dir and opens it.
func buildAndOpen(t testing.TB, cfg Config, texts []string) *Index {
	t.Helper()
	bd, err := NewBuilder(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		row, err := bd.Add(s)
		if err != nil || row != int32(i) {
			t.Fatalf("Add #%d = %d, %v; want row %d", i, row, err, i)
		}
	}
	path := filepath.Join(t.TempDir(), "ix.bm25")
	if err := bd.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestSearchMatchesReference compares Search with the naive oracle on
// seeded random corpora of awkward sizes and k in {0, 1, 5, n, n+1}.
func TestSearchMatchesReference(t *testing.T) {
	params := []struct{ k1, b float64 }{{0.9, 0.4}, {1.2, 0.75}, {0, 0.5}, {2, 0}, {0.5, 1}}
	for _, n := range []int{0, 1, 2, 3, 17, 64, 257} {
		for pi, p := range params {
			t.Run(fmt.Sprintf("n=%d/k1=%g/b=%g", n, p.k1, p.b), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(n), uint64(pi)))
				texts := make([]string, n)
				docs := make([][]string, n)
				for i := range texts {
					texts[i] = randomText(r, 12)
					docs[i] = Analyze(texts[i])
				}
				ix := buildAndOpen(t, litConfig(p.k1, p.b), texts)
				if ix.NumDocs() != n {
					t.Fatalf("NumDocs = %d, want %d", ix.NumDocs(), n)
				}
				for qi := 0; qi < 30; qi++ {
					q := randomText(r, 5)
					ref := refScores(docs, q, float32(p.k1), float32(p.b))
					tb := textbook(docs, q, p.k1, p.b)
					for d, s := range ref {
						if want := tb[d]; math.Abs(float64(s)-want) > 1e-5*max(1, want) {
							t.Fatalf("q=%q row %d: Lucene-form score %v, textbook %v", q, d, s, want)
						}
					}
					for _, k := range []int{0, 1, 5, n, n + 1} {
						got := ix.Search(q, k)
						want := refTopK(ref, k)
						if !slices.Equal(got, want) {
							t.Fatalf("Search(%q, %d)\n got %v\nwant %v", q, k, got, want)
						}
						if got, err := ix.searchPruned(q, k); err != nil || !sameHits(got, want) {
							t.Fatalf("searchPruned(%q, %d) err %v\n got %v\nwant %v", q, k, err, got, want)
						}
					}
				}
			})
		}
	}
}

func TestSearchEdgeCases(t *testing.T) {
	texts := []string{"the cat sat", "", "cats and dogs", "the of and", "dog dog dog", "cat"}
	ix := buildAndOpen(t, Config{}, texts)
	tests := []struct {
		name  string
		query string
		k     int
		rows  []int32
	}{
		{"stop words only query", "the and of", 10, nil},
		{"unknown term", "zebra", 10, nil},
		{"empty query", "", 10, nil},
		{"k zero", "cat", 0, nil},
		{"k negative", "cat", -1, nil},
		{"k above matches returns every match once", "cat", 100, []int32{5, 0, 2}},
		{"ties broken by ascending row", "cat", 1, []int32{5}},
		{"both terms rank first, no empty rows", "cat dog", 10, []int32{2, 4, 5, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := ix.Search(tc.query, tc.k)
			var rows []int32
			for _, h := range hits {
				rows = append(rows, h.Row)
				if !(h.Score > 0) {
					t.Errorf("row %d has score %v, want > 0", h.Row, h.Score)
				}
			}
			if !slices.Equal(rows, tc.rows) {
				t.Errorf("Search(%q, %d) rows %v, want %v (hits %v)", tc.query, tc.k, rows, tc.rows, hits)
			}
		})
	}
	if ix.NumDocs() != 6 || ix.NumTerms() != 3 {
		t.Errorf("NumDocs, NumTerms = %d, %d; want 6, 3 (cat sat dog)", ix.NumDocs(), ix.NumTerms())
	}
	// 4 non-empty rows hold 2+2+3+1 = 8 terms (Lucene's docCount excludes empty rows).
	if got := ix.AvgDocLen(); got != 2 {
		t.Errorf("AvgDocLen = %v, want 2", got)
	}
}

func TestQueryMultiplicity(t *testing.T) {
	ix := buildAndOpen(t, Config{}, []string{"apple banana", "apple", "banana banana cherry"})
	one := ix.Search("apple", 3)
	two := ix.Search("apple apples", 3) // both stem to "appl": boost 2
	if len(one) != 2 || len(two) != 2 {
		t.Fatalf("hits %v and %v, want 2 each", one, two)
	}
	for i := range one {
		if two[i].Row != one[i].Row || two[i].Score != 2*one[i].Score {
			t.Errorf("repeated term: hit %d = %v, want row %d score %v (twice the single-term score)", i, two[i], one[i].Row, 2*one[i].Score)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero value", Config{}, true},
		{"k1 zero (the default)", Config{K1: 0}, true},
		{"b bounds", Config{B: 1.0}, true},
		{"k1 negative (rlsearch.Off: k1 = 0)", Config{K1: -0.1}, true},
		{"b Off (b = 0)", Config{B: rlsearch.Off}, true},
		{"k1 NaN", Config{K1: math.NaN()}, false},
		{"k1 Inf", Config{K1: math.Inf(1)}, false},
		{"k1 -Inf", Config{K1: math.Inf(-1)}, false},
		{"b above 1", Config{B: 1.01}, false},
		{"b negative (rlsearch.Off: b = 0)", Config{B: -0.01}, true},
		{"b NaN", Config{B: math.NaN()}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Errorf("error %v does not wrap ErrConfig", err)
			}
			if _, err2 := NewBuilder(tc.cfg); (err2 == nil) != tc.ok {
				t.Errorf("NewBuilder error %v, want ok=%v", err2, tc.ok)
			}
		})
	}
	k1, b := Config{}.params()
	if k1 != 0.9 || b != 0.4 {
		t.Errorf("defaults k1, b = %v, %v; want Pyserini's 0.9, 0.4", k1, b)
	}
}

// TestConcurrentSearch runs Search and SearchBatch from many goroutines
// (meaningful under -race) and compares with serial results.
func TestConcurrentSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	texts := make([]string, 500)
	for i := range texts {
		texts[i] = randomText(r, 20)
	}
	ix := buildAndOpen(t, Config{}, texts)
	queries := make([]string, 200)
	want := make([][]rlsearch.Hit, len(queries))
	for i := range queries {
		queries[i] = randomText(r, 4)
		want[i] = ix.Search(queries[i], 10)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if g%2 == 0 {
				got, err := ix.SearchBatch(context.Background(), queries, 10)
				if err != nil {
					t.Error(err)
					return
				}
				for i := range got {
					if !slices.Equal(got[i], want[i]) {
						t.Errorf("SearchBatch query %d differs from serial Search", i)
					}
				}
				return
			}
			for i, q := range queries {
				if got := ix.Search(q, 10); !slices.Equal(got, want[i]) {
					t.Errorf("concurrent Search query %d differs from serial", i)
				}
			}
		}()
	}
	wg.Wait()
}

func TestSearchBatchErrors(t *testing.T) {
	ix := buildAndOpen(t, Config{}, []string{"a cat", "a dog"})
	if _, err := ix.SearchBatch(context.Background(), []string{"cat"}, -1); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("k=-1: err %v, want ErrBadInput", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.SearchBatch(ctx, []string{"cat", "dog"}, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err %v, want context.Canceled", err)
	}
	got, err := ix.SearchBatch(context.Background(), nil, 3)
	if err != nil || len(got) != 0 {
		t.Errorf("no queries: %v, %v; want empty, nil", got, err)
	}
}

// TestQueryKey checks the promise result caches rely on: queries with the
// same QueryKey get the same hits (scores bit for bit) at every k, on
// random queries and on the reorderings, case changes, punctuation and
// stop words that map to one key; and different analysed terms get
// different keys.
func TestQueryKey(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 41))
	texts := make([]string, 400)
	for i := range texts {
		texts[i] = randomText(r, 30)
	}
	ix := buildAndOpen(t, Config{}, texts)
	same := [][2]string{
		{"Who directed The Informant?", "informant directed who"},
		{"the running dogs", "RUNNING, dogs!"},
		{"dog dog cat", "cat dog the dog"},
		{"", "the a of"},
	}
	for i := 0; i < 50; i++ {
		q := randomText(r, 6)
		w := strings.Fields(q)
		r.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		same = append(same, [2]string{q, strings.ToUpper(strings.Join(w, " , "))})
	}
	for _, p := range same {
		if QueryKey(p[0]) != QueryKey(p[1]) {
			t.Errorf("QueryKey(%q) = %q, QueryKey(%q) = %q: want one key", p[0], QueryKey(p[0]), p[1], QueryKey(p[1]))
			continue
		}
		for _, k := range []int{0, 1, 3, 10, 1000} {
			a, err := ix.SearchErr(p[0], k)
			if err != nil {
				t.Fatal(err)
			}
			b, err := ix.SearchErr(p[1], k)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a, b) {
				t.Fatalf("k=%d: %q → %v but %q (same key) → %v", k, p[0], a, p[1], b)
			}
		}
	}
	for _, p := range [][2]string{{"dog", "dog dog"}, {"dog cat", "dog"}, {"running", "ran"}} {
		if QueryKey(p[0]) == QueryKey(p[1]) {
			t.Errorf("%q and %q share key %q but analyse to different terms", p[0], p[1], QueryKey(p[0]))
		}
	}
}
