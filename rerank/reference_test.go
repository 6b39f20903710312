package rerank

import (
	"context"
	"math"
	"testing"

	"github.com/rlsearch/rlsearch/transformer"
)

// TestGoReferenceEqualsORT: package transformer's float32 Go forward pass
// of Qwen3 (the reference the GPU path is tested against), on weights read
// from model.onnx's initializers, gives ONNX Runtime's no/yes logits and
// yes-probabilities for the exact prompts the reranker builds (prefix,
// body cut to MaxLength, suffix), both export variants, ORT batches
// left-padded and the reference one unpadded pair at a time.
func TestGoReferenceEqualsORT(t *testing.T) {
	for _, variant := range []string{"last", "full"} {
		t.Run(variant, func(t *testing.T) {
			dir := qwen3Model(t, variant)
			r := openTest(t, Config{Dir: dir, Sessions: 1, BatchSize: 4, MaxLength: 160})
			cfg, w, err := transformer.LoadModel(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			ref := transformer.NewQwen3Ref(*cfg.Qwen3, w)
			query := "who built the bridges of Paris?"
			docs := testDocs(7)
			docs = append(docs, "", "a very long document "+longText(400)) // empty body; cut to MaxLength
			logits := make([][2]float64, len(docs))
			scores, err := r.score(context.Background(), query, docs, logits)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for i, d := range docs {
				ids, _ := r.encodePair(query, d)
				got := ref.LastLogits(ids, []int32{r.noID, r.yesID})
				for j := range got {
					diff := math.Abs(float64(got[j]) - logits[i][j])
					worst = max(worst, diff)
					if !(diff <= 1e-4*max(1, math.Abs(logits[i][j]))) {
						t.Fatalf("doc %d (%d tokens) logit %d: ORT %v, Go reference %v", i, len(ids), j, logits[i][j], got[j])
					}
				}
				if p := transformer.YesProbability(got[0], got[1]); math.Abs(float64(p-scores[i])) > 1e-5 {
					t.Fatalf("doc %d: ORT P(yes) %v, Go reference %v", i, scores[i], p)
				}
			}
			t.Logf("%d pairs, max abs logit diff %.2g", len(docs), worst)
		})
	}
}

func longText(words int) string {
	b := make([]byte, 0, words*6)
	for i := range words {
		b = append(b, "word"[:1+i%4]...)
		b = append(b, ' ')
	}
	return string(b)
}
