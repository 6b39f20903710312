package transformer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rlsearch/rlsearch/internal/testutil"
)

// Qwen3 vocabulary ids of the reranker's answer tokens (Qwen3 tokenizer.json;
// rerank checks them against the tokenizer).
const testYes, testNo = 9693, 2152

// randomIDs returns sequences of the given lengths with ids in [lo, hi).
func randomIDs(r *rand.Rand, lens []int, lo, hi int) [][]int32 {
	out := make([][]int32, len(lens))
	for i, n := range lens {
		out[i] = make([]int32, n)
		for j := range out[i] {
			out[i][j] = int32(lo + r.IntN(hi-lo))
		}
	}
	return out
}

// TestBertRefMatchesNumpy: the float32 Go forward pass of a generated BERT
// (weights read from the ONNX export and from safetensors) equals the
// generator's independent float64 numpy forward pass.
func TestBertRefMatchesNumpy(t *testing.T) {
	dir := genModel(t, "gen_bert.py", "--preset", "tiny", "--seed", "1", "--safetensors", "f32")
	ids := randomIDs(rand.New(rand.NewPCG(1, 2)), []int{1, 2, 7, 33, 256}, 999, 30522)
	for _, seq := range ids {
		seq[0], seq[len(seq)-1] = 101, 102 // [CLS] ... [SEP]
	}
	var want struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	testutil.RunReference(t, "gen_bert.py", dir, map[string]any{"input_ids": ids}, &want)
	for _, format := range []string{"onnx", "safetensors"} {
		t.Run(format, func(t *testing.T) {
			cfg, w := loadDir(t, dir, format)
			m := NewBertRef(*cfg.Bert, w)
			got := m.Embed(ids, Pooling{Normalize: true})
			h := cfg.Bert.Hidden
			var worst float64
			for b := range ids {
				for i := 0; i < h; i++ {
					d := math.Abs(float64(got[b*h+i]) - want.Embeddings[b][i])
					worst = max(worst, d)
					if !(d < 1e-5) {
						t.Fatalf("sequence %d (%d tokens) dim %d: Go %v, numpy %v", b, len(ids[b]), i, got[b*h+i], want.Embeddings[b][i])
					}
				}
			}
			t.Logf("max abs diff %.2g", worst)
		})
	}
}

// TestQwen3RefMatchesNumpy: the float32 Go forward pass of a generated
// Qwen3 (ONNX initializers matched by graph order, and safetensors) gives
// the numpy reference's yes/no logits at the last position.
func TestQwen3RefMatchesNumpy(t *testing.T) {
	dir := genModel(t, "gen_qwen3.py", "--variant", "last", "--seed", "1", "--safetensors", "f32")
	ids := randomIDs(rand.New(rand.NewPCG(3, 4)), []int{1, 2, 9, 70, 300}, 0, 151669)
	var want struct {
		Logits [][]float64 `json:"logits"`
	}
	testutil.RunReference(t, "gen_qwen3.py", dir, map[string]any{"input_ids": ids, "token_ids": []int{testNo, testYes}}, &want)
	for _, format := range []string{"onnx", "safetensors"} {
		t.Run(format, func(t *testing.T) {
			cfg, w := loadDir(t, dir, format)
			m := NewQwen3Ref(*cfg.Qwen3, w)
			var worst float64
			for b, seq := range ids {
				got := m.LastLogits(seq, []int32{testNo, testYes})
				for j := range got {
					d := math.Abs(float64(got[j]) - want.Logits[b][j])
					worst = max(worst, d)
					if !(d < 1e-3*max(1, math.Abs(want.Logits[b][j]))) {
						t.Fatalf("sequence %d (%d tokens) logit %d: Go %v, numpy %v", b, len(seq), j, got[j], want.Logits[b][j])
					}
				}
			}
			t.Logf("max abs diff %.2g", worst)
		})
	}
}
