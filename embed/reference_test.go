package embed

import (
	"context"
	"math"
	"testing"

	"github.com/rlsearch/rlsearch/transformer"
)

// TestGoReferenceEqualsORT: package transformer's float32 Go forward pass
// (the reference the GPU path is tested against), on weights read from
// model.onnx's initializers, gives the ONNX Runtime encoder's embeddings for
// the same token ids: queries and passages with their E5 prefixes, mixed
// lengths up to MaxLength (ORT pads the batch; the reference runs each text
// alone, unpadded).
func TestGoReferenceEqualsORT(t *testing.T) {
	dir := encGenModel(t, "tiny")
	e := encOpen(t, Config{Dir: dir, Sessions: 1, BatchSize: 8})
	cfg, w, err := transformer.LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ref := transformer.NewBertRef(*cfg.Bert, w)
	texts := encParityTexts(t)
	ctx := context.Background()
	for _, kind := range []string{"query", "passage"} {
		t.Run(kind, func(t *testing.T) {
			prefix, encode := e.ModelConfig().QueryPrefix, e.EncodeQueries
			if kind == "passage" {
				prefix, encode = e.ModelConfig().PassagePrefix, e.EncodePassages
			}
			ids := make([][]int32, len(texts))
			for i, s := range texts {
				ids[i] = e.Tokenize(prefix, s)
			}
			got, err := encode(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			want := ref.Embed(ids, transformer.Pooling{Normalize: true})
			var worst float64
			for i := range got {
				d := math.Abs(float64(got[i] - want[i]))
				worst = max(worst, d)
				if !(d <= 1e-5) {
					dim := e.Dim()
					t.Fatalf("text %d (%d tokens) dim %d: ORT %v, Go reference %v", i/dim, len(ids[i/dim]), i%dim, got[i], want[i])
				}
			}
			t.Logf("%d texts, max abs diff %.2g", len(texts), worst)
		})
	}
}
