package sdk

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/embed"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

var (
	tmpRoot string

	bm25Once sync.Once
	bm25Ix   *index.Index
	bm25Err  error

	denseOnce sync.Once
	denseIx   *index.Index
	denseErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rlsearch-sdk-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	code := m.Run()
	if bm25Ix != nil {
		bm25Ix.Close()
	}
	if denseIx != nil {
		denseIx.Close()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// wikiIndex builds (once per test binary) a BM25 index of the shared
// wiki_multihop corpus (18,175 passages).
func wikiIndex(tb testing.TB) *index.Index {
	tb.Helper()
	data := testutil.DataDir(tb)
	bm25Once.Do(func() {
		dir := filepath.Join(tmpRoot, "bm25")
		ctx := context.Background()
		if _, bm25Err = index.Build(ctx, index.BuildConfig{Corpus: filepath.Join(data, "wiki_multihop", "corpus.jsonl"), Dir: dir}); bm25Err != nil {
			return
		}
		bm25Ix, bm25Err = index.Open(ctx, dir, index.OpenConfig{})
	})
	if bm25Err != nil {
		tb.Fatal(bm25Err)
	}
	return bm25Ix
}

// denseSubsetDocs is how many corpus passages the dense test index holds:
// the generated tiny model embeds them in seconds even under -race.
const denseSubsetDocs = 800

// denseIndex builds (once) an index with BM25 and a vector file (dense.shard) of the
// first denseSubsetDocs passages, embedded by the generated tiny BERT.
func denseIndex(tb testing.TB) *index.Index {
	tb.Helper()
	data := testutil.DataDir(tb)
	model := testutil.Model(tb, "tiny")
	lib := testutil.ORTLib(tb)
	denseOnce.Do(func() {
		ctx := context.Background()
		sub := filepath.Join(tmpRoot, "subset.jsonl")
		if denseErr = head(filepath.Join(data, "wiki_multihop", "corpus.jsonl"), sub, denseSubsetDocs); denseErr != nil {
			return
		}
		var enc *embed.Encoder
		if enc, denseErr = embed.Open(embed.Config{Dir: model, ORTLib: lib}); denseErr != nil {
			return
		}
		dir := filepath.Join(tmpRoot, "dense")
		if _, denseErr = index.Build(ctx, index.BuildConfig{Corpus: sub, Dir: dir, Encoder: enc}); denseErr != nil {
			return
		}
		denseIx, denseErr = index.Open(ctx, dir, index.OpenConfig{Encoder: enc})
	})
	if denseErr != nil {
		tb.Fatal(denseErr)
	}
	return denseIx
}

func head(src, dst string, n int) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; i < n && sc.Scan(); i++ {
		out.Write(sc.Bytes())
		out.Write([]byte{'\n'})
	}
	if err := sc.Err(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lexReranker is a deterministic test reranker: the score is the number of
// distinct BM25 analyzer terms of the query found in the document, plus a
// small length penalty. It is a test double for the Reranker contract, not
// a model.
type lexReranker struct{ calls atomic.Int64 }

func (r *lexReranker) Name() string { return "lexical-test" }

func (r *lexReranker) Rerank(_ context.Context, query string, docs []rlsearch.Document) ([]float32, error) {
	r.calls.Add(1)
	q := map[string]bool{}
	for _, t := range bm25.Analyze(query) {
		q[t] = true
	}
	out := make([]float32, len(docs))
	for i, d := range docs {
		seen := map[string]bool{}
		for _, t := range bm25.Analyze(d.Contents) {
			if q[t] && !seen[t] {
				seen[t] = true
				out[i]++
			}
		}
		out[i] -= float32(len(d.Contents)) / 1e6
	}
	return out, nil
}

// newRT returns a Runtime over ix with cfg's zero fields filled from ix.
func newRT(tb testing.TB, ix *index.Index, cfg Config) *Runtime {
	tb.Helper()
	if cfg.Retrievers == nil {
		cfg.Retrievers = ix.Retrievers()
	}
	if cfg.Docs == nil {
		cfg.Docs = ix
	}
	if cfg.Budgets.Timeout == 0 {
		// Wall-clock budgets are tested on their own; elsewhere a loaded
		// machine under -race must not turn results into timeouts.
		cfg.Budgets.Timeout = 5 * time.Minute
	}
	rt, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

func run(tb testing.TB, rt *Runtime, src string) Result {
	tb.Helper()
	return rt.Run(context.Background(), Request{Code: src, Question: "Who directed the 2018 film Robin Hood?"}, nil)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
