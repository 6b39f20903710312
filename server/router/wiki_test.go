package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
	"github.com/rlsearch/rlsearch/server/app"
)

// wikiQuestion is one wiki_multihop question.
type wikiQuestion struct {
	ID       string   `json:"id"`
	Question string   `json:"question"`
	Gold     []string `json:"gold_passage_ids"`
}

func loadQuestions(t *testing.T, path string) []wikiQuestion {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []wikiQuestion
	dec := json.NewDecoder(f)
	for dec.More() {
		var q wikiQuestion
		if err := dec.Decode(&q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	return out
}

// corpusWords returns the words of every 7th passage of the corpus (for
// random queries as frequent as in it).
func corpusWords(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var words []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; sc.Scan(); i++ {
		if i%7 != 0 {
			continue
		}
		var d struct {
			Contents string `json:"contents"`
		}
		json.Unmarshal(sc.Bytes(), &d)
		words = append(words, strings.Fields(d.Contents)...)
	}
	return words
}

// buildDenseOneAndShards indexes corpusPath with mc's encoder as one
// index and, with the same vectors (exported, not re-encoded), as n shards
// under t's temporary directory: the unsharded reference and the shards the
// router serves, for the byte-equality tests.
func buildDenseOneAndShards(t *testing.T, ctx context.Context, corpusPath string, mc embed.Config, n int) (one, shards string, m *index.Manifest) {
	t.Helper()
	enc, hash, closeEnc, err := app.OpenEncoder(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer closeEnc()
	tmp := t.TempDir()
	one = filepath.Join(tmp, "one")
	if _, err := index.Build(ctx, index.BuildConfig{Corpus: corpusPath, Dir: one, Encoder: enc, ConfigHash: hash}); err != nil {
		t.Fatal(err)
	}
	vecs := filepath.Join(tmp, "dense.fvecs")
	exportVectors(t, one, vecs)
	shards = filepath.Join(tmp, "shards")
	return one, shards, buildShards(t, corpusPath, shards, n, index.BuildConfig{Vectors: vecs, Encoder: enc, ConfigHash: hash})
}

// exportVectors writes the vector file of the index in dir as .fvecs (its
// fp16 values widened to float32, which fp16 storage gives back exactly).
func exportVectors(t *testing.T, dir, path string) {
	t.Helper()
	ix, err := index.Open(context.Background(), dir, index.OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	d := ix.Dense.Dim()
	v := ix.Dense.Vectors(0, ix.Dense.Len())
	var b bytes.Buffer
	for i := 0; i < len(v); i += d {
		binary.Write(&b, binary.LittleEndian, int32(d))
		binary.Write(&b, binary.LittleEndian, v[i:i+d])
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRouterEqualsOneServerWiki is the differential test of the issue on
// the real data: wiki_multihop (18,175 passages) as one index with a vector
// file (the generated tiny BERT, through ONNX Runtime) and as 4 shards,
// shards 0 and 2 with two replicas each, behind a router on loopback. For
// all 763 questions and 5,000 random queries, BM25 and dense, k 1, 3, 10,
// 100, /retrieve through the router must be byte for byte the unsharded
// server's (ids, order, scores); so must programs (sparse, dense, fused)
// and mutate on the questions. Under -race, a sample (see below).
func TestRouterEqualsOneServerWiki(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wiki_multihop with a vector file (about a minute)")
	}
	data := testutil.DataDir(t)
	// One session on one thread per server: seven servers share the
	// machine, and ORT's spinning thread pools oversubscribe it.
	mc := embed.Config{Dir: testutil.Model(t, "tiny"), ORTLib: testutil.ORTLib(t), MaxLength: 128, Sessions: 1, IntraOpThreads: 1}
	corpusPath := filepath.Join(data, "wiki_multihop", "corpus.jsonl")
	ctx := context.Background()
	t0 := time.Now()
	one, shards, m := buildDenseOneAndShards(t, ctx, corpusPath, mc, 4)
	t.Logf("built one index and 4 shards in %v", time.Since(t0).Round(time.Millisecond))

	cfg := app.Config{Index: app.IndexConfig{Model: mc}}
	oneNode := startIndex(t, one, cfg)
	set := startShards(t, shards, m, []int{2, 1, 2, 1}, cfg)
	rc := fastRouter(set.urls())
	rc.ShardTimeout = 5 * time.Minute // a differential test; seven servers share two cores, under -race too
	rt, svc := startRouter(t, rc, app.RouterConfig{})
	if got := svc.Router.Retrievers(); len(got) != 2 {
		t.Fatalf("router serves %v, want bm25 and e5", got)
	}

	questions := loadQuestions(t, filepath.Join(data, "wiki_multihop", "questions.jsonl"))
	if len(questions) != 763 {
		t.Fatalf("%d questions, want 763", len(questions))
	}
	words := corpusWords(t, corpusPath)
	r := rand.New(rand.NewPCG(24, 763))
	queries := make([]string, 0, len(questions)+5000)
	for _, q := range questions {
		queries = append(queries, q.Question)
	}
	for range 5000 {
		n := 1 + r.IntN(12)
		start := r.IntN(len(words) - n)
		w := append([]string(nil), words[start:start+n]...)
		if r.IntN(5) == 0 {
			w[r.IntN(n)] = "zzq" + fmt.Sprint(r.IntN(100)) // absent word
		}
		queries = append(queries, strings.Join(w, " "))
	}
	// Under -race (make test) a sample: every 8th query for BM25 (32nd at
	// k 100), every 64th for dense at k 10 only (query encoding under the
	// race detector is slow); every query and k without it (make
	// test-router-full).
	step, denseStep := 1, 1
	if raceEnabled {
		step, denseStep = 8, 64
	}
	sampled := func(step int) []string {
		var qs []string
		for i := 0; i < len(queries); i += step {
			qs = append(qs, queries[i])
		}
		return qs
	}

	c := &http.Client{}
	compare := func(path, body string) {
		t.Helper()
		wc, _, want := post(t, c, oneNode.url(), path, body)
		gc, hdr, got := post(t, c, rt.url(), path, body)
		if wc != 200 || gc != 200 || hdr.Get("X-Rlsearch-Partial") != "" || !bytes.Equal(got, want) {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s: router %d differs from one server %d at byte %d:\n router ...%.400s\nserver ...%.400s", path, gc, wc, i, got[max(0, i-100):], want[max(0, i-100):])
		}
	}
	for _, ret := range []string{"bm25", "e5"} {
		qs := sampled(step)
		if ret == "e5" {
			qs = sampled(denseStep)
		}
		ks := []int{1, 3, 10, 100}
		if raceEnabled && ret == "e5" {
			ks = []int{10}
		}
		for _, k := range ks {
			t1 := time.Now()
			if raceEnabled && k == 100 {
				qs = sampled(4 * step)
			}
			for lo := 0; lo < len(qs); lo += 256 {
				compare("/retrieve", retrieveBody(qs[lo:min(lo+256, len(qs))], k, ret))
			}
			t.Logf("%s k=%d: %d queries equal in %v", ret, k, len(qs), time.Since(t1).Round(time.Millisecond))
		}
	}

	// Programs: sparse, dense, fused and deduplicated retrieval, for every
	// (sampled) question.
	codes := []string{
		`print(sparse(question, k=5))`,
		`print(dense(question, k=5))`,
		`print(fuse(sparse(question, k=20), dense(question, k=20))[:5])`,
		`r = dedup(sparse(question, k=10) + dense(question, k=10))
print(r[:6])`,
	}
	var progs []map[string]string
	for i := 0; i < len(questions); i += max(1, denseStep/4) {
		progs = append(progs, map[string]string{"id": questions[i].ID, "question": questions[i].Question, "code": codes[i%len(codes)]})
	}
	for lo := 0; lo < len(progs); lo += 64 {
		b, _ := json.Marshal(map[string]any{"programs": progs[lo:min(lo+64, len(progs))]})
		compare("/v1/programs/execute", string(b))
	}

	// Mutate: the verifier's search over programs, on 40 questions.
	var trajs []map[string]any
	for i := 0; i < len(questions) && len(trajs) < 40; i += 19 {
		q := questions[i]
		trajs = append(trajs, map[string]any{"id": q.ID, "question": q.Question, "gold_ids": q.Gold,
			"turns": []map[string]string{{"role": "model", "text": fmt.Sprintf("<code>print(sparse(%q, k=3))</code>", q.Question)}}})
	}
	for lo := 0; lo < len(trajs); lo += 10 {
		b, _ := json.Marshal(map[string]any{"trajectories": trajs[lo:min(lo+10, len(trajs))], "executions": 16})
		compare("/v1/programs/mutate", string(b))
	}
}
