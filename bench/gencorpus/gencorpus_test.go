package gencorpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/corpus"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// seedPassages is the number of passages of the shared wiki_multihop corpus.
const seedPassages = 18175

func realSeed(t *testing.T) string {
	t.Helper()
	return filepath.Join(testutil.DataDir(t), "wiki_multihop", "corpus.jsonl")
}

const toySeed = `{"id": "p1", "contents": "\"Paris\"\nParis is the capital and largest city of France."}
{"id": "p2", "title": "Berlin", "text": "Berlin is the capital of Germany and its largest city. \"Quoted\" \\ back\tslash \u2028 sep"}
{"id": "p3", "title": "", "text": "Mount Everest is Earth's highest mountain above sea level."}
{"id": "p4", "title": "Empty", "text": "   "}
`

func writeToy(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "seed.jsonl")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func generate(t *testing.T, cfg Config) []byte {
	t.Helper()
	var b bytes.Buffer
	st, err := Generate(context.Background(), cfg, &b, nil)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", cfg, err)
	}
	if st.Bytes != int64(b.Len()) || st.Passages != cfg.N || st.Real+st.Generated != cfg.N {
		t.Fatalf("stats %+v do not match %d bytes, N %d", st, b.Len(), cfg.N)
	}
	return b.Bytes()
}

func readDocs(t *testing.T, b []byte) []corpus.Passage {
	t.Helper()
	r, err := corpus.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []corpus.Passage
	for {
		p, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("output is not a valid corpus: %v", err)
		}
		out = append(out, p)
	}
}

func TestValidate(t *testing.T) {
	ok := Config{Seed: "s.jsonl", N: 10}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"ok", func(*Config) {}, ""},
		{"unigram", func(c *Config) { c.Model = ModelUnigram }, ""},
		{"prob 1", func(c *Config) { c.TopicProb = 1 }, ""},
		{"no seed", func(c *Config) { c.Seed = "" }, "Seed"},
		{"n 0", func(c *Config) { c.N = 0 }, "N must be positive"},
		{"n negative", func(c *Config) { c.N = -3 }, "N must be positive"},
		{"n huge", func(c *Config) { c.N = 1 << 40 }, "N must be at most"},
		{"model", func(c *Config) { c.Model = "lda" }, `Model "lda"`},
		{"prob high", func(c *Config) { c.TopicProb = 1.5 }, "TopicProb"},
		{"prob negative", func(c *Config) { c.TopicProb = -0.1 }, "TopicProb"},
		{"workers", func(c *Config) { c.Workers = -1 }, "Workers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want ErrBadConfig naming %q", err, tc.want)
			}
			// Generate and WriteFile refuse it before touching anything.
			if _, err := Generate(context.Background(), c, io.Discard, nil); !errors.Is(err, ErrBadConfig) {
				t.Errorf("Generate: %v, want ErrBadConfig", err)
			}
		})
	}
}

func TestSeedErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, seed string
		n          int
		want       error
		wantText   string
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), 5, nil, "nope.jsonl"},
		{"empty", writeToy(t, "\n\n"), 5, ErrBadConfig, "no passages"},
		{"bad line", writeToy(t, `{"id": "a", "contents": 3}`+"\n"), 5, corpus.ErrBadLine, "line 1"},
		{"collision", writeToy(t, toySeed+`{"id": "g5", "contents": "x\ny"}`+"\n"), 10, ErrIDCollision, `"g5"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(context.Background(), Config{Seed: tc.seed, N: tc.n}, io.Discard, nil)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("Generate: %v, want %v naming %q", err, tc.want, tc.wantText)
			}
		})
	}
	// An id of the generated form that the output does not generate is fine.
	seed := writeToy(t, toySeed+`{"id": "g2", "contents": "x\ny"}`+"\n"+`{"id": "g99", "contents": "x\ny"}`+"\n")
	docs := readDocs(t, generate(t, Config{Seed: seed, N: 20, RandSeed: 1}))
	if len(docs) != 20 || docs[3].ID != "g2" || docs[5].ID != "g5" {
		t.Errorf("ids %q %q, want g2 (real) and g5 (generated)", docs[3].ID, docs[5].ID)
	}
}

// TestToySeed checks the output's shape on awkward seed text (quotes,
// backslashes, tabs, U+2028, an empty title, a skipped empty passage).
func TestToySeed(t *testing.T) {
	seed := writeToy(t, toySeed)
	for _, model := range []string{ModelTopical, ModelUnigram} {
		for _, n := range []int{1, 2, 3, 4, ChunkRows, ChunkRows + 1, 3*ChunkRows - 1} {
			docs := readDocs(t, generate(t, Config{Seed: seed, N: n, Model: model, RandSeed: 7}))
			if len(docs) != n {
				t.Fatalf("%s N=%d: %d passages", model, n, len(docs))
			}
			if docs[0].ID != "p1" || (n > 1 && docs[1].Contents != "\"Berlin\"\nBerlin is the capital of Germany and its largest city. \"Quoted\" \\ back\tslash \u2028 sep") {
				t.Fatalf("%s N=%d: real passages changed: %+v", model, n, docs[:min(n, 2)])
			}
			for row := 3; row < n; row++ {
				if want := "g" + itoa(row); docs[row].ID != want {
					t.Fatalf("%s: row %d id %q, want %q", model, row, docs[row].ID, want)
				}
				if docs[row].Title() == "" || docs[row].Text() == "" {
					t.Fatalf("%s: row %d has an empty title or text: %q", model, row, docs[row].Contents)
				}
			}
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestDeterminism(t *testing.T) {
	seed := realSeed(t)
	n := seedPassages + 3*ChunkRows + 17
	base := generate(t, Config{Seed: seed, N: n, RandSeed: 42, Workers: 1})
	for _, tc := range []struct {
		name string
		cfg  Config
		same bool
	}{
		{"again", Config{Seed: seed, N: n, RandSeed: 42, Workers: 1}, true},
		{"workers 2", Config{Seed: seed, N: n, RandSeed: 42, Workers: 2}, true},
		{"workers 7", Config{Seed: seed, N: n, RandSeed: 42, Workers: 7}, true},
		{"explicit defaults", Config{Seed: seed, N: n, RandSeed: 42, Model: ModelTopical, TopicProb: DefaultTopicProb}, true},
		{"other seed", Config{Seed: seed, N: n, RandSeed: 43}, false},
		{"unigram", Config{Seed: seed, N: n, RandSeed: 42, Model: ModelUnigram}, false},
		{"prob", Config{Seed: seed, N: n, RandSeed: 42, TopicProb: 0.5}, false},
		{"no variants", Config{Seed: seed, N: n, RandSeed: 42, NoRareVariants: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := generate(t, tc.cfg)
			if bytes.Equal(got, base) != tc.same {
				t.Fatalf("same bytes = %v, want %v", !tc.same, tc.same)
			}
			if !tc.same && !bytes.Equal(got[:len(got)/8], base[:len(got)/8]) {
				t.Fatal("the real passages at the start differ")
			}
		})
	}
	// A prefix of a longer output is the shorter output: rows depend only on
	// their chunk.
	longer := generate(t, Config{Seed: seed, N: n + ChunkRows, RandSeed: 42, Workers: 2})
	if !bytes.HasPrefix(longer, base) {
		t.Error("a longer corpus does not extend the shorter one")
	}
}

func TestRealPassagesFirst(t *testing.T) {
	seed := realSeed(t)
	r, err := corpus.Open(seed)
	if err != nil {
		t.Fatal(err)
	}
	var real []corpus.Passage
	for {
		p, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		real = append(real, p)
	}
	r.Close()
	for _, n := range []int{100, seedPassages, seedPassages + 500} {
		docs := readDocs(t, generate(t, Config{Seed: seed, N: n, RandSeed: 1}))
		if len(docs) != n {
			t.Fatalf("N=%d: %d passages", n, len(docs))
		}
		for i := range min(n, len(real)) {
			if docs[i].ID != real[i].ID || docs[i].Contents != real[i].Contents {
				t.Fatalf("N=%d row %d: got %q %q, want the real passage %q", n, i, docs[i].ID, docs[i].Contents[:20], real[i].ID)
			}
		}
		for i := len(real); i < n; i++ {
			if docs[i].ID != "g"+itoa(i) {
				t.Fatalf("row %d id %q", i, docs[i].ID)
			}
		}
	}
}

// TestStatsMatchReal compares the real corpus with a same-size generated
// sample of each model. Measured (seed 1, 18,175 passages each), real /
// topical (p=0.6, rare variants) / unigram: postings with tf>1 0.197 /
// 0.200 / 0.032, distinct terms per passage 44.4 / 45.5 / 57.4, mean df/N
// of a passage's terms 0.0334 / 0.0334 / 0.0410, strong pairs 0.181 /
// 0.116 / 0.048, terms with df=1 0.579 / 0.406 / 0.290 (0.334 without
// variants), words-per-passage KS distance 0 / 0.008 / 0.008. The
// thresholds below leave a margin around those values.
func TestStatsMatchReal(t *testing.T) {
	seed := realSeed(t)
	dir := t.TempDir()
	ctx := context.Background()
	real, err := CollectStats(ctx, seed, StatsConfig{Label: "real"})
	if err != nil {
		t.Fatal(err)
	}
	stats := map[string]*CorpusStats{}
	for _, model := range []string{ModelTopical, ModelUnigram} {
		path := filepath.Join(dir, model+".jsonl.zst")
		if _, err := WriteFile(ctx, Config{Seed: seed, N: 2 * seedPassages, RandSeed: 1, Model: model}, path, nil); err != nil {
			t.Fatal(err)
		}
		st, err := CollectStats(ctx, path, StatsConfig{Label: model, From: seedPassages})
		if err != nil {
			t.Fatal(err)
		}
		stats[model] = st
		// The first half is the real corpus again.
		head, err := CollectStats(ctx, path, StatsConfig{To: seedPassages})
		if err != nil {
			t.Fatal(err)
		}
		if head.Postings != real.Postings || head.Vocab != real.Vocab || head.RepeatFraction != real.RepeatFraction {
			t.Errorf("%s: rows [0, %d) differ from the real corpus: %+v vs %+v", model, seedPassages, head, real)
		}
	}
	var table bytes.Buffer
	WriteStatsTable(&table, []*CorpusStats{real, stats[ModelTopical], stats[ModelUnigram]})
	t.Logf("\n%s", table.String())
	top, uni := stats[ModelTopical], stats[ModelUnigram]
	if real.Passages != seedPassages || top.Passages != seedPassages || uni.Passages != seedPassages {
		t.Fatalf("passages %d %d %d, want %d each", real.Passages, top.Passages, uni.Passages, seedPassages)
	}
	for _, st := range []*CorpusStats{top, uni} {
		if ks := real.LengthKS(st); ks > 0.03 {
			t.Errorf("%s: words-per-passage KS distance %.4f to the real corpus, want <= 0.03", st.Label, ks)
		}
		if d := st.Terms.Mean - real.Terms.Mean; d > 2 || d < -2 {
			t.Errorf("%s: %.1f terms per passage, real %.1f", st.Label, st.Terms.Mean, real.Terms.Mean)
		}
	}
	near := func(name string, got, want, tol float64) {
		if got < want-tol || got > want+tol {
			t.Errorf("topical %s = %.4f, want %.4f ± %.4f (real)", name, got, want, tol)
		}
	}
	near("tf>1 fraction", top.RepeatFraction, real.RepeatFraction, 0.04)
	near("distinct terms per passage", top.Distinct.Mean, real.Distinct.Mean, 4)
	near("mean df/N of a passage's terms", top.MeanDocTermDF, real.MeanDocTermDF, 0.003)
	if uni.RepeatFraction > 0.06 || top.RepeatFraction < uni.RepeatFraction+0.1 {
		t.Errorf("tf>1 fraction: topical %.4f, unigram %.4f; want unigram < 0.06 and topical above it by 0.1", top.RepeatFraction, uni.RepeatFraction)
	}
	if top.StrongPairs < 2*uni.StrongPairs || top.StrongPairs > real.StrongPairs+0.02 || uni.StrongPairs > 0.08 {
		t.Errorf("strong pairs: real %.4f, topical %.4f, unigram %.4f; want unigram < 0.08 <= 2*unigram <= topical <= real+0.02",
			real.StrongPairs, top.StrongPairs, uni.StrongPairs)
	}
	if top.DF1Fraction < 0.37 || top.DF1Fraction > real.DF1Fraction || uni.DF1Fraction > 0.33 {
		t.Errorf("terms with df=1: real %.4f, topical %.4f, unigram %.4f; want unigram <= 0.33, 0.37 <= topical <= real",
			real.DF1Fraction, top.DF1Fraction, uni.DF1Fraction)
	}
	if abs(top.Distinct.Mean-real.Distinct.Mean) >= abs(uni.Distinct.Mean-real.Distinct.Mean) {
		t.Errorf("distinct terms per passage: topical %.1f is not closer to real %.1f than unigram %.1f", top.Distinct.Mean, real.Distinct.Mean, uni.Distinct.Mean)
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestWriteFile checks compressed round trips and that a cancelled or failed
// write leaves neither the file nor a temporary.
func TestWriteFile(t *testing.T) {
	seed := writeToy(t, toySeed)
	cfg := Config{Seed: seed, N: 5000, RandSeed: 3}
	plain := generate(t, cfg)
	dir := t.TempDir()
	for _, name := range []string{"c.jsonl", "c.jsonl.zst", "c.jsonl.gz"} {
		path := filepath.Join(dir, name)
		if _, err := WriteFile(context.Background(), cfg, path, nil); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(path)
		if name != "c.jsonl" && bytes.Equal(raw, plain) {
			t.Errorf("%s is not compressed", name)
		}
		docs := readDocs(t, raw) // the corpus reader detects gzip and zstd
		want := readDocs(t, plain)
		if len(docs) != len(want) || docs[len(docs)-1] != want[len(want)-1] {
			t.Errorf("%s: %d passages, want %d equal to the plain output", name, len(docs), len(want))
		}
	}

	cdir := t.TempDir()
	path := filepath.Join(cdir, "big.jsonl.zst")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// 2^31-1 rows would take hours: the cancel always lands mid-stream.
	done := make(chan error)
	go func() {
		_, err := WriteFile(ctx, Config{Seed: seed, N: 1<<31 - 1, RandSeed: 1}, path, nil)
		done <- err
	}()
	time.AfterFunc(300*time.Millisecond, cancel)
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled WriteFile: %v, want context.Canceled", err)
	}
	entries, _ := os.ReadDir(cdir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a cancelled write, want only the old file", len(entries))
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the existing file was changed: %q", b)
	}
	// A bad seed fails before anything is renamed, too.
	if _, err := WriteFile(context.Background(), Config{Seed: filepath.Join(cdir, "nope"), N: 3}, path, nil); err == nil {
		t.Error("WriteFile with a missing seed succeeded")
	}
	if entries, _ := os.ReadDir(cdir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed write", len(entries))
	}
	if _, err := WriteFile(context.Background(), cfg, filepath.Join(cdir, "nodir", "x.jsonl"), nil); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}

// failWriter fails after a few writes.
type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteError(t *testing.T) {
	seed := writeToy(t, toySeed)
	_, err := Generate(context.Background(), Config{Seed: seed, N: 50 * ChunkRows, Workers: 3}, &failWriter{n: 5}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Generate into a failing writer: %v, want the write error", err)
	}
}

func TestKSDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b []int32
		want float64
	}{
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, 0},
		{[]int32{1, 2, 3}, []int32{3, 2, 1}, 0},
		{[]int32{1, 1}, []int32{2, 2}, 1},
		{[]int32{1, 2}, []int32{2, 3}, 0.5},
		{[]int32{1, 2, 3, 4}, []int32{1}, 0.75},
		{nil, []int32{1}, 1},
	} {
		if got := KSDistance(tc.a, tc.b); abs(got-tc.want) > 1e-12 {
			t.Errorf("KSDistance(%v, %v) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestCollectStatsToy(t *testing.T) {
	path := writeToy(t, `{"id":"a","contents":"\"T\"\nrun run runs dog"}
{"id":"b","contents":"\"T\"\ncat dog"}
{"id":"c","contents":"\"U\"\nthe of"}
`)
	st, err := CollectStats(context.Background(), path, StatsConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Terms: a = t run run run dog (run stems runs), b = t cat dog, c = u.
	if st.Passages != 3 || st.Postings != 3+3+1 || st.Vocab != 5 || st.Terms.Max != 5 {
		t.Fatalf("stats %+v", st)
	}
	if abs(st.RepeatFraction-1.0/7) > 1e-12 || st.DFMax != 2 || abs(st.DF1Fraction-3.0/5) > 1e-12 {
		t.Errorf("tf>1 %.4f (want 1/7), df max %d (want 2), df=1 %.4f (want 3/5)", st.RepeatFraction, st.DFMax, st.DF1Fraction)
	}
	if st.TopDF[0] != (TermDF{"dog", 2.0 / 3}) || st.TopDF[1] != (TermDF{"t", 2.0 / 3}) {
		t.Errorf("top df %v, want dog and t at 2/3 (ties by term)", st.TopDF)
	}
	sub, err := CollectStats(context.Background(), path, StatsConfig{From: 1, To: 2})
	if err != nil || sub.Passages != 1 || sub.Postings != 3 {
		t.Fatalf("rows [1,2): %+v, %v", sub, err)
	}
	for _, bad := range []StatsConfig{{From: -1}, {From: 2, To: 2}, {To: -1}} {
		if _, err := CollectStats(context.Background(), path, bad); !errors.Is(err, ErrBadConfig) {
			t.Errorf("%+v: %v, want ErrBadConfig", bad, err)
		}
	}
	if _, err := CollectStats(context.Background(), path, StatsConfig{From: 3}); !errors.Is(err, ErrEmptySample) {
		t.Errorf("rows past the end: %v, want ErrEmptySample", err)
	}
}

// FuzzJSONEscape checks jsonEscape against encoding/json.
func FuzzJSONEscape(f *testing.F) {
	for _, s := range []string{"", "plain", `"q" \ b`, "tab\tnl\ncr\r\x00\x1f", "\u2028\u2029 é 中", "bad\xff\xfeutf8", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		want := strings.TrimSuffix(b.String(), "\n")
		if got := `"` + string(jsonEscape(nil, s)) + `"`; got != want {
			t.Fatalf("jsonEscape(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestRareVariants(t *testing.T) {
	seed := writeToy(t, `{"id":"a","contents":"\"T\"\nword word Zed. 1291, \"ok\" ---"}`+"\n")
	m, err := loadSeed(context.Background(), seed, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := newGen(m, Config{Seed: seed, N: 100, Model: ModelTopical}.withDefaults())
	if !g.variants || m.word(0) == nil || string(m.word(0)) != "word" || m.firstRare != 1 {
		t.Fatalf("word 0 %q, firstRare %d: want the repeated word first and the rest rare", m.word(0), m.firstRare)
	}
	for _, tc := range []struct {
		word string
		row  int
		want string
	}{
		{"Zed.", 1, "Zedq."},
		{"Zed.", 3, "Zedq."},
		{"Zed.", 4, "Zedx."},
		{"Zed.", 16, "Zedj."},
		{"Zed.", 25, "Zedqq."},
		{"1291,", 9, "1291z,"},
		{`\"ok\"`, 1, `\"okq\"`},
		{"---", 1, "---"},
	} {
		id := int32(-1)
		for i := int32(0); i < int32(len(m.wordOff)-1); i++ {
			if string(m.word(i)) == tc.word {
				id = i
			}
		}
		if id < m.firstRare {
			t.Fatalf("%q is not a rare word (id %d)", tc.word, id)
		}
		if got := string(g.rare(nil, id, tc.row)); got != tc.want {
			t.Errorf("rare(%q, row %d) = %q, want %q", tc.word, tc.row, got, tc.want)
		}
	}
	for x := range uint64(2000) {
		if r := isqrt(x); r*r > x || (r+1)*(r+1) <= x {
			t.Fatalf("isqrt(%d) = %d", x, r)
		}
	}
	// The unigram model keeps the seed vocabulary.
	if newGen(m, Config{Seed: seed, N: 100, Model: ModelUnigram}.withDefaults()).variants {
		t.Error("unigram writes variants")
	}
}

// TestPickRange checks the multiply-shift reduction stays in range.
func TestPickRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint64{1, 2, 3, 1 << 20, 1<<31 - 1} {
		for range 1000 {
			if v := pick(r.Uint64(), n); v >= n {
				t.Fatalf("pick(_, %d) = %d", n, v)
			}
		}
		if v := pick(^uint64(0), n); v != n-1 {
			t.Errorf("pick(max, %d) = %d, want %d", n, v, n-1)
		}
	}
}

// BenchmarkGenerate measures Generate into io.Discard (plain JSONL), seed
// loading included (about 0.3 s of each iteration), as passages/s.
func BenchmarkGenerate(b *testing.B) {
	seed := filepath.Join(testutil.DataDir(b), "wiki_multihop", "corpus.jsonl")
	for _, model := range []string{ModelTopical, ModelUnigram} {
		b.Run("model="+model+"/n=300000", func(b *testing.B) {
			n := 300_000
			var bytes int64
			for b.Loop() {
				st, err := Generate(context.Background(), Config{Seed: seed, N: n, Model: model, RandSeed: 1}, io.Discard, nil)
				if err != nil {
					b.Fatal(err)
				}
				bytes = st.Bytes
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "passages/s")
			b.SetBytes(bytes)
		})
	}
}
