package sdk

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// countingReranker counts the documents a reranker is asked to score.
type countingReranker struct {
	inner rlsearch.Reranker
	docs  atomic.Int64
}

func (c *countingReranker) Name() string { return c.inner.Name() }

func (c *countingReranker) Rerank(ctx context.Context, q string, docs []rlsearch.Document) ([]float32, error) {
	c.docs.Add(int64(len(docs)))
	return c.inner.Rerank(ctx, q, docs)
}

// BenchmarkVerify measures the mutation search over the first 64 HotpotQA
// and MuSiQue questions of the shared set, each starting from the
// single-query width-3 BM25 program of its text, with the shared primitive
// cache and without it. MaxVerified is 256 so that every search spends its
// whole budget (or exhausts U(p)): the metrics compare equal work.
// Reported: verified mutations/s, executions/s and retriever searches per
// program. "bm25" has no reranker (U(p) is the 4 other widths);
// "bm25+rerank" adds the deterministic test reranker (lexReranker, a
// stand-in for Qwen3-Reranker), so U(p) also holds the rerank ladder.
func BenchmarkVerify(b *testing.B) {
	ix := wikiIndex(b)
	var qs []struct {
		q    string
		gold []string
	}
	for _, q := range wikiQuestions(b) {
		if len(qs) < 64 && (q.Dataset == "hotpotqa" || q.Dataset == "musique") {
			qs = append(qs, struct {
				q    string
				gold []string
			}{q.Question, q.GoldIDs})
		}
	}
	ctx := context.Background()
	for _, rr := range []struct {
		name string
		cfg  Config
	}{{"bm25", Config{}}, {"bm25+rerank", Config{Reranker: &countingReranker{inner: &lexReranker{}}}}} {
		rt := newRT(b, ix, rr.cfg)
		counter, _ := rr.cfg.Reranker.(*countingReranker)
		for _, cached := range []bool{true, false} {
			name := rr.name + "/cached"
			if !cached {
				name = rr.name + "/uncached"
			}
			b.Run(name, func(b *testing.B) {
				v := newVerifier(b, rt, MutateConfig{MaxVerified: MaxExecutions, NoCache: !cached})
				var verified, executions, searches, programs int
				if counter != nil {
					counter.docs.Store(0)
				}
				for b.Loop() {
					for _, q := range qs {
						res, err := v.Search(ctx, Program{Queries: []string{q.q}, Mode: ModeSparse, Width: 3, Print: 3}, nil, Gold{IDs: q.gold}, nil)
						if err != nil {
							b.Fatal(err)
						}
						verified += len(res.Verified)
						executions += res.Executions
						searches += res.Searches
						programs++
					}
				}
				sec := b.Elapsed().Seconds()
				b.ReportMetric(float64(verified)/sec, "verified/s")
				b.ReportMetric(float64(executions)/sec, "executions/s")
				b.ReportMetric(float64(searches)/float64(programs), "searches/program")
				b.ReportMetric(float64(executions)/float64(programs), "executions/program")
				if counter != nil {
					b.ReportMetric(float64(counter.docs.Load())/float64(programs), "reranked-docs/program")
				}
			})
		}
	}
}
