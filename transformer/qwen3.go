package transformer

import (
	"fmt"
	"math"
)

// qwen3Tensors are a Qwen3ForCausalLM's weights as float32 (Linear
// weights [out, in]); the embedding is kept only as the tensor, its rows
// converted on use.
type qwen3Tensors struct {
	embed  *Tensor
	layers []qwen3Layer
	norm   []float32
	head   *Tensor // lm_head.weight, or the embedding when tied
}

type qwen3Layer struct {
	inNorm, postNorm []float32
	wqkv             []float32 // q, k, v stacked: [(nh + 2 nkv)·hd, H]
	qNorm, kNorm     []float32
	wo               []float32
	wgu              []float32 // gate, up stacked: [2I, H]
	wd               []float32
}

func loadQwen3Tensors(c Qwen3Config, w *Weights) *qwen3Tensors {
	m := &qwen3Tensors{norm: f32(w, "model.norm.weight")}
	m.embed, _ = w.Tensor("model.embed_tokens.weight")
	m.head = m.embed
	if t, ok := w.Tensor("lm_head.weight"); ok && !c.TieWordEmbeddings {
		m.head = t
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		g := func(s string) []float32 { return f32(w, p+s) }
		L := qwen3Layer{inNorm: g("input_layernorm.weight"), postNorm: g("post_attention_layernorm.weight"),
			qNorm: g("self_attn.q_norm.weight"), kNorm: g("self_attn.k_norm.weight"), wo: g("self_attn.o_proj.weight"),
			wd: g("mlp.down_proj.weight")}
		L.wqkv = append(append(g("self_attn.q_proj.weight"), g("self_attn.k_proj.weight")...), g("self_attn.v_proj.weight")...)
		L.wgu = append(g("mlp.gate_proj.weight"), g("mlp.up_proj.weight")...)
		m.layers = append(m.layers, L)
	}
	return m
}

// InvFreq returns RoPE's inverse frequencies θ^(-2i/d), i < d/2, in
// float32 (transformers' default rotary init; RoFormer, Su et al. 2021).
func InvFreq(headDim int, theta float64) []float32 {
	v := make([]float32, headDim/2)
	for i := range v {
		v[i] = float32(1 / math.Pow(theta, float64(2*i)/float64(headDim)))
	}
	return v
}

// Qwen3Ref is the float32 reference forward pass of a Qwen3ForCausalLM on
// the CPU, written from the architecture (transformers modeling_qwen3.py):
// per layer RMSNorm, q/k/v projections without bias, per-head RMSNorm of q
// and k, rotary embedding (rotate_half layout, positions 0..n-1 of the
// sequence, angle pos·inv_freq in float32), causal grouped-query attention,
// o_proj, residual; RMSNorm, SwiGLU MLP down(silu(gate(x))·up(x)),
// residual; final RMSNorm. Only the logits the reranker reads are computed:
// the LM-head rows it asks for at the last position. It is what the GPU
// path is tested against, and it equals ONNX Runtime's output on the
// generated test models (rerank's tests). Safe for concurrent use.
type Qwen3Ref struct {
	Config  Qwen3Config
	t       *qwen3Tensors
	invFreq []float32
}

// NewQwen3Ref copies the layer weights to float32. The embedding and LM
// head stay in w, which must stay open while the Qwen3Ref is used.
func NewQwen3Ref(cfg Qwen3Config, w *Weights) *Qwen3Ref {
	return &Qwen3Ref{Config: cfg, t: loadQwen3Tensors(cfg, w), invFreq: InvFreq(cfg.HeadDim, cfg.RopeTheta)}
}

// LastLogits returns, for one sequence (ids below VocabSize, at least one),
// the LM-head logits of the given vocabulary rows at its last position.
func (m *Qwen3Ref) LastLogits(ids []int32, rows []int32) []float32 {
	c := m.Config
	h, n, hd := c.Hidden, len(ids), c.HeadDim
	nq, nkv := c.Heads, c.KVHeads
	wq := (nq + 2*nkv) * hd
	x := make([]float32, n*h)
	for t, id := range ids {
		copy(x[t*h:(t+1)*h], m.t.embed.Row(int(id)))
	}
	hs := make([]float32, n*h)
	qpos := make([]int, n)
	for i := range qpos {
		qpos[i] = i
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	ctx := make([]float32, n*nq*hd)
	for _, L := range m.t.layers {
		for t := 0; t < n; t++ {
			rmsNorm(hs[t*h:(t+1)*h], x[t*h:(t+1)*h], L.inNorm, c.RMSNormEps)
		}
		qkv := linear(hs, n, h, L.wqkv, wq, nil)
		for t := 0; t < n; t++ {
			for head := 0; head < nq+nkv; head++ {
				v := qkv[t*wq+head*hd : t*wq+(head+1)*hd]
				g := L.qNorm
				if head >= nq {
					g = L.kNorm
				}
				rmsNorm(v, v, g, c.RMSNormEps)
				rope(v, t, m.invFreq)
			}
		}
		group := nq / nkv
		for head := 0; head < nq; head++ {
			kh := head / group
			attend(qkv[head*hd:], wq, qkv[(nq+kh)*hd:], qkv[(nq+nkv+kh)*hd:], wq, n, n, hd, scale, true, qpos, ctx[head*hd:], nq*hd)
		}
		o := linear(ctx, n, nq*hd, L.wo, h, nil)
		for i := range x {
			x[i] += o[i]
		}
		for t := 0; t < n; t++ {
			rmsNorm(hs[t*h:(t+1)*h], x[t*h:(t+1)*h], L.postNorm, c.RMSNormEps)
		}
		gu := linear(hs, n, h, L.wgu, 2*c.Intermediate, nil)
		in := c.Intermediate
		act := make([]float32, n*in)
		for t := 0; t < n; t++ {
			for i := 0; i < in; i++ {
				g, u := float64(gu[t*2*in+i]), gu[t*2*in+in+i]
				act[t*in+i] = float32(g/(1+math.Exp(-g))) * u
			}
		}
		d := linear(act, n, in, L.wd, h, nil)
		for i := range x {
			x[i] += d[i]
		}
	}
	last := make([]float32, h)
	rmsNorm(last, x[(n-1)*h:], m.t.norm, c.RMSNormEps)
	out := make([]float32, len(rows))
	for i, r := range rows {
		out[i] = dot(last, m.t.head.Row(int(r)))
	}
	return out
}

// rope applies the rotate_half rotary embedding at position p to one head
// vector in place.
func rope(v []float32, p int, invFreq []float32) {
	half := len(v) / 2
	for i := 0; i < half; i++ {
		s, c := math.Sincos(float64(float32(p) * invFreq[i]))
		a, b := float64(v[i]), float64(v[i+half])
		v[i] = float32(a*c - b*s)
		v[i+half] = float32(b*c + a*s)
	}
}

// YesProbability is the Qwen3-Reranker score: softmax over the (no, yes)
// logits, the probability of yes (model card).
func YesProbability(no, yes float32) float32 {
	return float32(1 / (1 + math.Exp(float64(no)-float64(yes))))
}
