package transformer

import (
	"fmt"
	"math"
)

// Pooling is how an encoder turns token states into one vector.
type Pooling struct {
	CLS       bool // the first token's state (BGE) instead of the mean over the tokens (E5)
	Normalize bool // L2-normalise (E5; the rlsearch.Encoder contract)
}

// bertTensors are a BertModel's weights as float32, Linear weights [out, in].
type bertTensors struct {
	word, pos, typ []float32
	embG, embB     []float32
	layers         []bertLayer
}

type bertLayer struct {
	wqkv, bqkv []float32 // query, key, value stacked: [3H, H], [3H]
	wo, bo     []float32
	ln1g, ln1b []float32
	wi, bi     []float32
	wo2, bo2   []float32
	ln2g, ln2b []float32
}

func f32(w *Weights, name string) []float32 {
	t, _ := w.Tensor(name)
	return t.Float32()
}

func loadBertTensors(c BertConfig, w *Weights) *bertTensors {
	m := &bertTensors{
		word: f32(w, "embeddings.word_embeddings.weight"), pos: f32(w, "embeddings.position_embeddings.weight"),
		typ:  f32(w, "embeddings.token_type_embeddings.weight"),
		embG: f32(w, "embeddings.LayerNorm.weight"), embB: f32(w, "embeddings.LayerNorm.bias"),
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		g := func(s string) []float32 { return f32(w, p+s) }
		var L bertLayer
		for _, s := range []string{"query", "key", "value"} {
			L.wqkv = append(L.wqkv, g("attention.self."+s+".weight")...)
			L.bqkv = append(L.bqkv, g("attention.self."+s+".bias")...)
		}
		L.wo, L.bo = g("attention.output.dense.weight"), g("attention.output.dense.bias")
		L.ln1g, L.ln1b = g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias")
		L.wi, L.bi = g("intermediate.dense.weight"), g("intermediate.dense.bias")
		L.wo2, L.bo2 = g("output.dense.weight"), g("output.dense.bias")
		L.ln2g, L.ln2b = g("output.LayerNorm.weight"), g("output.LayerNorm.bias")
		m.layers = append(m.layers, L)
	}
	return m
}

// BertRef is the float32 reference forward pass of a BertModel (E5) on
// the CPU, written from the architecture (transformers modeling_bert.py):
// word + token type + absolute position embeddings, LayerNorm; per layer
// multi-head self-attention over the sequence's own tokens (packed batches
// have no padding to mask), output projection, residual + LayerNorm, exact
// erf GELU MLP, residual + LayerNorm. It is what the GPU path is tested
// against, and it equals ONNX Runtime's output on the generated test models
// (embed's tests). Safe for concurrent use.
type BertRef struct {
	Config BertConfig
	t      *bertTensors
}

// NewBertRef copies the weights to float32 (w may be closed afterwards).
func NewBertRef(cfg BertConfig, w *Weights) *BertRef {
	return &BertRef{Config: cfg, t: loadBertTensors(cfg, w)}
}

// Hidden returns the last hidden state [len(ids), Hidden] of one sequence
// (token types 0). len(ids) must be at most MaxPositions and every id
// below VocabSize (callers check; embed's tokenizer guarantees it).
func (m *BertRef) Hidden(ids []int32) []float32 {
	c := m.Config
	h, n := c.Hidden, len(ids)
	x := make([]float32, n*h)
	for t, id := range ids {
		row := x[t*h : (t+1)*h]
		for i := range row {
			row[i] = m.t.word[int(id)*h+i] + m.t.typ[i] + m.t.pos[t*h+i]
		}
	}
	layerNormRows(x, h, m.t.embG, m.t.embB, c.LayerNormEps)
	hd := c.HeadDim()
	scale := float32(1 / math.Sqrt(float64(hd)))
	ctx := make([]float32, n*h)
	for _, L := range m.t.layers {
		qkv := linear(x, n, h, L.wqkv, 3*h, L.bqkv)
		for head := 0; head < c.Heads; head++ {
			o := head * hd
			attend(qkv[o:], 3*h, qkv[h+o:], qkv[2*h+o:], 3*h, n, n, hd, scale, false, nil, ctx[o:], h)
		}
		a := linear(ctx, n, h, L.wo, h, L.bo)
		for i := range a {
			a[i] += x[i]
		}
		layerNormRows(a, h, L.ln1g, L.ln1b, c.LayerNormEps)
		x = a
		f := linear(x, n, h, L.wi, c.Intermediate, L.bi)
		for i, v := range f {
			f[i] = float32(gelu(float64(v)))
		}
		y := linear(f, n, c.Intermediate, L.wo2, h, L.bo2)
		for i := range y {
			y[i] += x[i]
		}
		layerNormRows(y, h, L.ln2g, L.ln2b, c.LayerNormEps)
		x = y
	}
	return x
}

// Embed returns the pooled vectors [len(ids), Hidden] of a batch, each
// sequence computed on its own (so a batch equals one sequence at a time
// bit for bit); an empty sequence gives a zero row.
func (m *BertRef) Embed(ids [][]int32, p Pooling) []float32 {
	h := m.Config.Hidden
	out := make([]float32, len(ids)*h)
	for b, seq := range ids {
		if len(seq) == 0 {
			continue
		}
		pool(m.Hidden(seq), len(seq), h, p, out[b*h:(b+1)*h])
	}
	return out
}

// pool writes the pooled, optionally normalised vector of hidden [n, h].
func pool(hidden []float32, n, h int, p Pooling, dst []float32) {
	acc := make([]float64, h)
	if p.CLS {
		for i := range acc {
			acc[i] = float64(hidden[i])
		}
	} else {
		for t := 0; t < n; t++ {
			for i, v := range hidden[t*h : (t+1)*h] {
				acc[i] += float64(v)
			}
		}
		for i := range acc {
			acc[i] /= float64(n)
		}
	}
	k := 1.0
	if p.Normalize {
		var ss float64
		for _, v := range acc {
			ss += v * v
		}
		if ss > 0 {
			k = 1 / math.Sqrt(ss)
		}
	}
	for i, v := range acc {
		dst[i] = float32(v * k)
	}
}

// gelu is the exact erf GELU (BERT hidden_act "gelu").
func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
