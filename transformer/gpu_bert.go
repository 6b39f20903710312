package transformer

import (
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
)

// BertGPU is a BertModel (E5) on one GPU: weights in fp16 (1-D parameters
// fp32), the forward pass in cuBLAS fp16 GEMMs with fp32 accumulation and
// the kernels of kernels/nn.cu, the residual stream in fp32. A batch is
// packed without padding; attention sees only each sequence's own tokens,
// so a text's vector does not depend on what it is batched with beyond
// the GEMMs' summation order. Safe for concurrent use: calls run one at a
// time on the GPU's owner goroutine. Close releases the GPU memory.
type BertGPU struct {
	Config BertConfig
	gpuModel

	word, pos, typ cuda.DevPtr
	embG, embB     cuda.DevPtr
	layers         []bertGPULayer
}

type bertGPULayer struct {
	wqkv, wo, wi, wo2      cuda.DevPtr // fp16 [out, in]
	bqkv, bo, bi, bo2      cuda.DevPtr // fp32
	ln1g, ln1b, ln2g, ln2b cuda.DevPtr
	bq, bk, bv             cuda.DevPtr // into bqkv
}

// OpenBertGPU uploads a BertModel's weights to GPU gc.Device. w may be
// closed afterwards. Errors wrap ErrNoGPU (and cuda.ErrNoDevice) when the
// GPU is unusable (ProbeGPU), ErrWeights for weights fp16 cannot hold, or
// say why the shape is unsupported (head size outside
// kernels.AttentionHeadDims).
func OpenBertGPU(cfg BertConfig, w *Weights, gc GPUConfig) (*BertGPU, error) {
	gc, err := gc.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := bertGPUSupported(cfg); err != nil {
		return nil, err
	}
	be, err := openCUDA(gc.Device)
	if err != nil {
		return nil, err
	}
	m, err := newBertGPU(cfg, w, gc, be)
	if err != nil {
		be.release()
		return nil, err
	}
	return m, nil
}

// OpenBertGPUOn is OpenBertGPU on x instead of a GPU (calls serialised):
// tests run the GPU model on the CPU emulator (kernels/kernelemu) this way.
func OpenBertGPUOn(cfg BertConfig, w *Weights, gc GPUConfig, x Executor) (*BertGPU, error) {
	gc, err := gc.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := bertGPUSupported(cfg); err != nil {
		return nil, err
	}
	return newBertGPU(cfg, w, gc, &execBackend{x: x})
}

func bertGPUSupported(cfg BertConfig) error {
	for _, d := range kernels.AttentionHeadDims {
		if cfg.HeadDim() == d {
			return nil
		}
	}
	return fmt.Errorf("%w: head size %d (hidden %d / %d heads): the GPU attention kernel is built for %v", ErrConfig, cfg.HeadDim(), cfg.Hidden, cfg.Heads, kernels.AttentionHeadDims)
}

func newBertGPU(cfg BertConfig, w *Weights, gc GPUConfig, be backend) (*BertGPU, error) {
	m := &BertGPU{Config: cfg, gpuModel: gpuModel{gc: gc, be: be}}
	t := func(name string) *Tensor { tt, _ := w.Tensor(name); return tt }
	err := m.upload(func(u *uploader) {
		f32 := func(dst *cuda.DevPtr, ts ...*Tensor) {
			vs := make([][]float32, len(ts))
			for i, tt := range ts {
				vs[i] = tt.Float32()
			}
			u.f32(dst, vs...)
		}
		u.f16(&m.word, t("embeddings.word_embeddings.weight"))
		u.f16(&m.pos, t("embeddings.position_embeddings.weight"))
		u.f16(&m.typ, t("embeddings.token_type_embeddings.weight"))
		f32(&m.embG, t("embeddings.LayerNorm.weight"))
		f32(&m.embB, t("embeddings.LayerNorm.bias"))
		for l := 0; l < cfg.Layers; l++ {
			p := fmt.Sprintf("encoder.layer.%d.", l)
			var L bertGPULayer
			u.f16(&L.wqkv, t(p+"attention.self.query.weight"), t(p+"attention.self.key.weight"), t(p+"attention.self.value.weight"))
			f32(&L.bqkv, t(p+"attention.self.query.bias"), t(p+"attention.self.key.bias"), t(p+"attention.self.value.bias"))
			u.f16(&L.wo, t(p+"attention.output.dense.weight"))
			f32(&L.bo, t(p+"attention.output.dense.bias"))
			f32(&L.ln1g, t(p+"attention.output.LayerNorm.weight"))
			f32(&L.ln1b, t(p+"attention.output.LayerNorm.bias"))
			u.f16(&L.wi, t(p+"intermediate.dense.weight"))
			f32(&L.bi, t(p+"intermediate.dense.bias"))
			u.f16(&L.wo2, t(p+"output.dense.weight"))
			f32(&L.bo2, t(p+"output.dense.bias"))
			f32(&L.ln2g, t(p+"output.LayerNorm.weight"))
			f32(&L.ln2b, t(p+"output.LayerNorm.bias"))
			h := cuda.DevPtr(4 * cfg.Hidden)
			L.bq, L.bk, L.bv = L.bqkv, L.bqkv+h, L.bqkv+2*h
			m.layers = append(m.layers, L)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Device says where the model runs ("gpu:0 (NVIDIA H200, compute capability 9.0)").
func (m *BertGPU) Device() string { return m.be.name() }

// Embed returns the pooled vectors [len(ids), Hidden] (row-major, owned
// by the caller) of a batch of token id sequences (each complete:
// [CLS] … [SEP], at most MaxPositions long, ids below VocabSize; token
// type 0). An empty sequence gives a zero row. Sequences run in packed
// forward passes of at most GPUConfig.MaxBatchTokens tokens. Errors: bad
// input (wrapping ErrInput), ErrClosed, CUDA failures.
func (m *BertGPU) Embed(ids [][]int32, p Pooling) ([]float32, error) {
	c := m.Config
	for i, s := range ids {
		if len(s) > c.MaxPositions {
			return nil, fmt.Errorf("%w: sequence %d has %d tokens, the model has %d positions", ErrInput, i, len(s), c.MaxPositions)
		}
		if len(s) > m.gc.MaxBatchTokens {
			return nil, fmt.Errorf("%w: sequence %d has %d tokens, more than MaxBatchTokens %d", ErrInput, i, len(s), m.gc.MaxBatchTokens)
		}
		for j, id := range s {
			if id < 0 || int(id) >= c.VocabSize {
				return nil, fmt.Errorf("%w: ids[%d][%d] = %d outside the vocabulary [0, %d)", ErrInput, i, j, id, c.VocabSize)
			}
		}
	}
	h := c.Hidden
	out := make([]float32, len(ids)*h)
	err := m.forEachChunk(ids, func(x Executor, idx []int) error {
		vecs, err := m.forward(x, pack(ids, idx), p)
		if err != nil {
			return err
		}
		for k, i := range idx {
			copy(out[i*h:(i+1)*h], vecs[k*h:(k+1)*h])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (m *BertGPU) forward(x Executor, b packed, p Pooling) ([]float32, error) {
	c := m.Config
	T, B, H, I := len(b.ids), len(b.cu)-1, c.Hidden, c.Intermediate
	ws := &m.ws
	bufs := map[string]int64{"ids": int64(4 * T), "pos": int64(4 * T), "cu": int64(4 * (B + 1)),
		"resid": int64(4 * T * H), "xh": int64(2 * T * H), "qkv": int64(2 * T * 3 * H), "ctx": int64(2 * T * H),
		"ff": int64(2 * T * I), "out": int64(4 * B * H)}
	ptr := map[string]cuda.DevPtr{}
	for name, n := range bufs {
		q, err := ws.get(x, name, n)
		if err != nil {
			return nil, err
		}
		ptr[name] = q
	}
	for name, v := range map[string][]int32{"ids": b.ids, "pos": b.pos, "cu": b.cu} {
		if err := x.CopyHtoD(ptr[name], i32bytes(v)); err != nil {
			return nil, err
		}
	}
	resid, xh, qkv, ctx, ff := ptr["resid"], ptr["xh"], ptr["qkv"], ptr["ctx"], ptr["ff"]
	eps := float32(c.LayerNormEps)
	s := &stepper{x: x}
	s.launch(kernels.EmbedLN(kernels.EmbedLNArgs{IDs: ptr["ids"], Pos: ptr["pos"], Word: m.word, PosEmb: m.pos, TypeEmb: m.typ,
		Gamma: m.embG, Beta: m.embB, Eps: eps, H: H, T: T, Resid: resid, XH: xh}))
	hd := c.HeadDim()
	scale := float32(1 / math.Sqrt(float64(hd)))
	for _, L := range m.layers {
		s.gemm(linearArgs(xh, T, H, L.wqkv, 3*H, qkv, false))
		s.launch(kernels.Attention(kernels.AttentionArgs{QKV: qkv, Ld: int64(3 * H), QOff: 0, KOff: H, VOff: 2 * H,
			QBias: L.bq, KBias: L.bk, VBias: L.bv, NH: c.Heads, NKV: c.Heads, HD: hd, Cu: ptr["cu"], B: B, MaxLen: b.maxLen,
			Scale: scale, Out: ctx, LdOut: int64(H)}))
		s.gemm(linearArgs(ctx, T, H, L.wo, H, resid, true))
		s.launch(kernels.BiasLN(kernels.BiasLNArgs{Resid: resid, Bias: L.bo, Gamma: L.ln1g, Beta: L.ln1b, Eps: eps, H: H, T: T, XH: xh}))
		s.gemm(linearArgs(xh, T, H, L.wi, I, ff, false))
		s.launch(kernels.BiasGELU(ff, L.bi, I, T))
		s.gemm(linearArgs(ff, T, I, L.wo2, H, resid, true))
		s.launch(kernels.BiasLN(kernels.BiasLNArgs{Resid: resid, Bias: L.bo2, Gamma: L.ln2g, Beta: L.ln2b, Eps: eps, H: H, T: T, XH: xh}))
	}
	s.launch(kernels.Pool(resid, ptr["cu"], H, B, p.CLS, p.Normalize, ptr["out"]))
	if s.err != nil {
		return nil, s.err
	}
	raw := make([]byte, 4*B*H)
	if err := x.CopyDtoH(raw, ptr["out"]); err != nil {
		return nil, err
	}
	return bytesF32(raw), nil
}

// Close frees the model's GPU memory and releases the GPU. Idempotent;
// Embed after Close returns ErrClosed.
func (m *BertGPU) Close() error {
	m.close()
	return nil
}
