package transformer

import (
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
)

// Qwen3GPU is a Qwen3ForCausalLM on one GPU, reduced to what the
// reranker reads: the logits of two vocabulary rows (Qwen3-Reranker's "no"
// and "yes") at each sequence's last position. Weights in fp16 (norm gains
// and the two LM-head rows fp32), GEMMs on cuBLAS fp16 with fp32
// accumulation, the residual stream in fp32 (Qwen models carry activations
// near fp16's range there), the kernels of kernels/nn.cu. Batches are
// packed without padding, attention is causal per sequence, and the last
// layer runs attention, o_proj and the MLP for the last positions only; no
// full-vocabulary projection exists. Safe for concurrent use (calls run one
// at a time on the GPU's owner goroutine). Close releases the GPU memory.
type Qwen3GPU struct {
	Config Qwen3Config
	Rows   [2]int32 // the LM-head rows scored, in output order
	gpuModel

	embed, norm, head2, invFreq cuda.DevPtr
	layers                      []qwen3GPULayer
}

type qwen3GPULayer struct {
	inNorm, postNorm, qNorm, kNorm cuda.DevPtr // fp32
	wqkv, wo, wgu, wd              cuda.DevPtr // fp16 [out, in]; q,k,v and gate,up stacked
}

// OpenQwen3GPU uploads a Qwen3ForCausalLM's weights to GPU gc.Device,
// keeping LM-head rows rows[0] and rows[1] (for the reranker: the "no" and
// "yes" token ids). w may be closed afterwards. Errors as OpenBertGPU's.
func OpenQwen3GPU(cfg Qwen3Config, w *Weights, rows [2]int32, gc GPUConfig) (*Qwen3GPU, error) {
	gc, err := gc.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := qwen3GPUSupported(cfg, rows); err != nil {
		return nil, err
	}
	be, err := openCUDA(gc.Device)
	if err != nil {
		return nil, err
	}
	m, err := newQwen3GPU(cfg, w, rows, gc, be)
	if err != nil {
		be.release()
		return nil, err
	}
	return m, nil
}

// OpenQwen3GPUOn is OpenQwen3GPU on x instead of a GPU (tests: the CPU
// emulator of kernels/kernelemu).
func OpenQwen3GPUOn(cfg Qwen3Config, w *Weights, rows [2]int32, gc GPUConfig, x Executor) (*Qwen3GPU, error) {
	gc, err := gc.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := qwen3GPUSupported(cfg, rows); err != nil {
		return nil, err
	}
	return newQwen3GPU(cfg, w, rows, gc, &execBackend{x: x})
}

func qwen3GPUSupported(cfg Qwen3Config, rows [2]int32) error {
	for _, r := range rows {
		if r < 0 || int(r) >= cfg.VocabSize {
			return fmt.Errorf("%w: LM-head row %d outside the vocabulary [0, %d)", ErrInput, r, cfg.VocabSize)
		}
	}
	for _, d := range kernels.AttentionHeadDims {
		if cfg.HeadDim == d {
			return nil
		}
	}
	return fmt.Errorf("%w: head_dim %d: the GPU attention kernel is built for %v", ErrConfig, cfg.HeadDim, kernels.AttentionHeadDims)
}

func newQwen3GPU(cfg Qwen3Config, w *Weights, rows [2]int32, gc GPUConfig, be backend) (*Qwen3GPU, error) {
	m := &Qwen3GPU{Config: cfg, Rows: rows, gpuModel: gpuModel{gc: gc, be: be}}
	t := func(name string) *Tensor { tt, _ := w.Tensor(name); return tt }
	head := t("model.embed_tokens.weight")
	if h := t("lm_head.weight"); h != nil && !cfg.TieWordEmbeddings {
		head = h
	}
	err := m.upload(func(u *uploader) {
		u.f16(&m.embed, t("model.embed_tokens.weight"))
		u.f32(&m.norm, t("model.norm.weight").Float32())
		u.f32(&m.head2, head.Row(int(rows[0])), head.Row(int(rows[1])))
		u.f32(&m.invFreq, InvFreq(cfg.HeadDim, cfg.RopeTheta))
		for l := 0; l < cfg.Layers; l++ {
			p := fmt.Sprintf("model.layers.%d.", l)
			var L qwen3GPULayer
			u.f32(&L.inNorm, t(p+"input_layernorm.weight").Float32())
			u.f32(&L.postNorm, t(p+"post_attention_layernorm.weight").Float32())
			u.f32(&L.qNorm, t(p+"self_attn.q_norm.weight").Float32())
			u.f32(&L.kNorm, t(p+"self_attn.k_norm.weight").Float32())
			u.f16(&L.wqkv, t(p+"self_attn.q_proj.weight"), t(p+"self_attn.k_proj.weight"), t(p+"self_attn.v_proj.weight"))
			u.f16(&L.wo, t(p+"self_attn.o_proj.weight"))
			u.f16(&L.wgu, t(p+"mlp.gate_proj.weight"), t(p+"mlp.up_proj.weight"))
			u.f16(&L.wd, t(p+"mlp.down_proj.weight"))
			m.layers = append(m.layers, L)
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Device says where the model runs.
func (m *Qwen3GPU) Device() string { return m.be.name() }

// LastLogits returns, for each sequence of ids (at least one token each,
// ids below VocabSize), the logits of Rows[0] and Rows[1] at its last
// position: [len(ids)][2], owned by the caller. Sequences run in packed
// forward passes of at most GPUConfig.MaxBatchTokens tokens. Errors: bad
// input (ErrInput), ErrClosed, CUDA failures.
func (m *Qwen3GPU) LastLogits(ids [][]int32) ([][2]float32, error) {
	for i, s := range ids {
		if len(s) == 0 {
			return nil, fmt.Errorf("%w: sequence %d is empty", ErrInput, i)
		}
		if len(s) > m.gc.MaxBatchTokens {
			return nil, fmt.Errorf("%w: sequence %d has %d tokens, more than MaxBatchTokens %d", ErrInput, i, len(s), m.gc.MaxBatchTokens)
		}
		for j, id := range s {
			if id < 0 || int(id) >= m.Config.VocabSize {
				return nil, fmt.Errorf("%w: ids[%d][%d] = %d outside the vocabulary [0, %d)", ErrInput, i, j, id, m.Config.VocabSize)
			}
		}
	}
	out := make([][2]float32, len(ids))
	err := m.forEachChunk(ids, func(x Executor, idx []int) error {
		lg, err := m.forward(x, pack(ids, idx))
		if err != nil {
			return err
		}
		for k, i := range idx {
			out[i] = [2]float32{lg[2*k], lg[2*k+1]}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (m *Qwen3GPU) forward(x Executor, b packed) ([]float32, error) {
	c := m.Config
	T, B, H, I, hd := len(b.ids), len(b.cu)-1, c.Hidden, c.Intermediate, c.HeadDim
	nq, nkv := c.Heads, c.KVHeads
	wq := (nq + 2*nkv) * hd
	bufs := map[string]int64{"ids": int64(4 * T), "pos": int64(4 * T), "cu": int64(4 * (B + 1)), "last": int64(4 * B),
		"resid": int64(4 * T * H), "xh": int64(2 * T * H), "qkv": int64(2 * T * wq), "ctx": int64(2 * T * nq * hd),
		"gu": int64(2 * T * 2 * I), "act": int64(2 * T * I), "rlast": int64(4 * B * H), "hfin": int64(4 * B * H), "logits": int64(8 * B)}
	ptr := map[string]cuda.DevPtr{}
	for name, n := range bufs {
		q, err := m.ws.get(x, name, n)
		if err != nil {
			return nil, err
		}
		ptr[name] = q
	}
	for name, v := range map[string][]int32{"ids": b.ids, "pos": b.pos, "cu": b.cu, "last": b.last} {
		if err := x.CopyHtoD(ptr[name], i32bytes(v)); err != nil {
			return nil, err
		}
	}
	resid, xh, qkv, ctx, gu, act, rlast := ptr["resid"], ptr["xh"], ptr["qkv"], ptr["ctx"], ptr["gu"], ptr["act"], ptr["rlast"]
	eps := float32(c.RMSNormEps)
	scale := float32(1 / math.Sqrt(float64(hd)))
	s := &stepper{x: x}
	s.launch(kernels.EmbedGather(ptr["ids"], m.embed, H, T, resid))
	for l, L := range m.layers {
		s.launch(kernels.RMSNorm(kernels.RMSNormArgs{X: resid, W: L.inNorm, Eps: eps, H: H, T: T, OutH: xh}))
		s.gemm(linearArgs(xh, T, H, L.wqkv, wq, qkv, false))
		s.launch(kernels.QKNormRoPE(kernels.QKNormRoPEArgs{QKV: qkv, Ld: int64(wq), NQ: nq, NK: nkv, HD: hd, QW: L.qNorm, KW: L.kNorm,
			Eps: eps, Pos: ptr["pos"], InvFreq: m.invFreq, T: T}))
		att := kernels.AttentionArgs{QKV: qkv, Ld: int64(wq), QOff: 0, KOff: nq * hd, VOff: (nq + nkv) * hd, NH: nq, NKV: nkv, HD: hd,
			Cu: ptr["cu"], B: B, MaxLen: b.maxLen, Scale: scale, Causal: true, Out: ctx, LdOut: int64(nq * hd)}
		rows, res := T, resid
		if l == len(m.layers)-1 {
			// Only the last positions feed the logits: attention for those
			// queries alone (keys and values of every position are above),
			// then o_proj and the MLP on B rows.
			att.QLast = true
			rows, res = B, rlast
			s.launch(kernels.GatherF32(resid, ptr["last"], H, B, rlast))
		}
		s.launch(kernels.Attention(att))
		s.gemm(linearArgs(ctx, rows, nq*hd, L.wo, H, res, true))
		s.launch(kernels.RMSNorm(kernels.RMSNormArgs{X: res, W: L.postNorm, Eps: eps, H: H, T: rows, OutH: xh}))
		s.gemm(linearArgs(xh, rows, H, L.wgu, 2*I, gu, false))
		s.launch(kernels.SwiGLU(gu, I, rows, act))
		s.gemm(linearArgs(act, rows, I, L.wd, H, res, true))
	}
	s.launch(kernels.RMSNorm(kernels.RMSNormArgs{X: rlast, W: m.norm, Eps: eps, H: H, T: B, OutF: ptr["hfin"]}))
	s.launch(kernels.Dot2(ptr["hfin"], m.head2, H, B, ptr["logits"]))
	if s.err != nil {
		return nil, s.err
	}
	raw := make([]byte, 8*B)
	if err := x.CopyDtoH(raw, ptr["logits"]); err != nil {
		return nil, err
	}
	return bytesF32(raw), nil
}

// Close frees the model's GPU memory and releases the GPU. Idempotent.
func (m *Qwen3GPU) Close() error {
	m.close()
	return nil
}
