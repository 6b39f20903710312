package rerank

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// BenchmarkRerank reports pairs/s of the generated models (random weights,
// real input/output shapes): the tiny Qwen3 model in its last-position
// variant (the full-logits variant would return 64×~600×151,669 floats per
// batch) and the tiny BERT cross-encoder, at batch 1, 16, 64 and documents
// of 128 and 512 tokens.
func BenchmarkRerank(b *testing.B) {
	for _, m := range []struct{ name, kind string }{{"qwen3-tiny-last", "qwen3"}, {"cross-tiny", "cross"}} {
		var dir string
		if m.kind == "qwen3" {
			dir = qwen3Model(b, "last")
		} else {
			dir = crossModel(b, 1)
		}
		for _, docLen := range []int{128, 512} {
			for _, batch := range []int{1, 16, 64} {
				b.Run(fmt.Sprintf("model=%s/doclen=%d/batch=%d", m.name, docLen, batch), func(b *testing.B) {
					maxLen := docLen + 128
					if m.kind == "cross" {
						maxLen = 512 // BERT's position table: documents are cut to fit
					}
					r := openTest(b, Config{Dir: dir, Sessions: 1, BatchSize: batch, BatchWait: -1, MaxLength: maxLen})
					docs := make([]rlsearch.Document, batch)
					for i := range docs {
						// " the" is one token in Qwen3 and "the" one in BERT uncased.
						docs[i] = rlsearch.Document{ID: fmt.Sprint(i), Contents: strings.TrimSpace(strings.Repeat(" the", docLen))}
					}
					ids, _ := r.encodePair("what is the capital of france?", docs[0].Contents)
					ctx := context.Background()
					b.ResetTimer()
					for b.Loop() {
						if _, err := r.Rerank(ctx, "what is the capital of france?", docs); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
					b.ReportMetric(float64(len(ids)), "tokens/pair")
				})
			}
		}
	}
}
