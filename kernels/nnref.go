package kernels

import (
	"fmt"
	"math"

	"github.com/x448/float16"
)

// References of nn.cu's kernels on host slices: the same arguments as the
// builders in nn.go with slices in place of device pointers (fp16 as
// binary16 bits, uint16), the same results up to rounding: they compute in
// float64 and round once where the kernel rounds (every fp16 store), so a
// kernel's fp32 outputs agree to ~1e-6 relative and its fp16 outputs to one
// unit in the last place, except rls_attn, whose probabilities are rounded
// to fp16 before the product with V (see AttentionRef). Nil slices stand
// for the null pointers the builders accept.

// H2F is binary16 bits to float32; F2H rounds to the nearest binary16
// (ties to even), as __float2half_rn.
func H2F(h uint16) float32 { return float16.Frombits(h).Float32() }

// F2H rounds f to binary16 bits (round to nearest even).
func F2H(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// f2h64 rounds a float64 to binary16 through float32 (the kernels hold
// float32 values when they store fp16).
func f2h64(v float64) uint16 { return F2H(float32(v)) }

// EmbedLNRefArgs mirrors EmbedLNArgs.
type EmbedLNRefArgs struct {
	IDs, Pos, Types       []int32
	Word, PosEmb, TypeEmb []uint16
	Gamma, Beta           []float32
	Eps                   float32
	H, T                  int
	Resid                 []float32
	XH                    []uint16
}

// EmbedLNRef is rls_embed_ln's reference.
func EmbedLNRef(a EmbedLNRefArgs) {
	h := a.H
	x := make([]float64, h)
	for t := 0; t < a.T; t++ {
		typ := int32(0)
		if a.Types != nil {
			typ = a.Types[t]
		}
		for i := range x {
			v := float64(H2F(a.Word[int(a.IDs[t])*h+i]))
			if a.TypeEmb != nil {
				v += float64(H2F(a.TypeEmb[int(typ)*h+i]))
			}
			x[i] = v + float64(H2F(a.PosEmb[int(a.Pos[t])*h+i]))
		}
		layerNorm64(x, a.Gamma, a.Beta, a.Eps, a.Resid[t*h:(t+1)*h], a.XH[t*h:(t+1)*h])
	}
}

func layerNorm64(x []float64, gamma, beta []float32, eps float32, resid []float32, xh []uint16) {
	var mean, q float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		q += (v - mean) * (v - mean)
	}
	rstd := 1 / math.Sqrt(q/float64(len(x))+float64(eps))
	for i, v := range x {
		y := (v-mean)*rstd*float64(gamma[i]) + float64(beta[i])
		resid[i] = float32(y)
		xh[i] = f2h64(y)
	}
}

// BiasLNRefArgs mirrors BiasLNArgs.
type BiasLNRefArgs struct {
	Resid       []float32
	Bias        []float32
	Gamma, Beta []float32
	Eps         float32
	H, T        int
	XH          []uint16
}

// BiasLNRef is rls_bias_ln's reference.
func BiasLNRef(a BiasLNRefArgs) {
	x := make([]float64, a.H)
	for t := 0; t < a.T; t++ {
		r := a.Resid[t*a.H : (t+1)*a.H]
		for i := range x {
			v := r[i]
			if a.Bias != nil {
				v += a.Bias[i] // fp32 addition, as the kernel stores it
			}
			x[i] = float64(v)
		}
		layerNorm64(x, a.Gamma, a.Beta, a.Eps, r, a.XH[t*a.H:(t+1)*a.H])
	}
}

// GELU is the exact erf GELU, 0.5·x·(1 + erf(x/√2)) (BERT hidden_act
// "gelu"; Hendrycks and Gimpel 2016).
func GELU(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// BiasGELURef is rls_bias_gelu's reference on the rows × n matrix x.
func BiasGELURef(x []uint16, bias []float32, n int) {
	for e, h := range x {
		v := H2F(h)
		if bias != nil {
			v += bias[e%n]
		}
		x[e] = f2h64(GELU(float64(v)))
	}
}

// RMSNormRefArgs mirrors RMSNormArgs.
type RMSNormRefArgs struct {
	X    []float32
	Rows []int32
	W    []float32
	Eps  float32
	H, T int
	OutH []uint16
	OutF []float32
}

// RMSNormRef is rls_rmsnorm's reference.
func RMSNormRef(a RMSNormRefArgs) {
	for t := 0; t < a.T; t++ {
		src := t
		if a.Rows != nil {
			src = int(a.Rows[t])
		}
		r := a.X[src*a.H : (src+1)*a.H]
		var ss float64
		for _, v := range r {
			ss += float64(v) * float64(v)
		}
		k := 1 / math.Sqrt(ss/float64(a.H)+float64(a.Eps))
		for i, v := range r {
			y := float64(v) * k * float64(a.W[i])
			if a.OutH != nil {
				a.OutH[t*a.H+i] = f2h64(y)
			}
			if a.OutF != nil {
				a.OutF[t*a.H+i] = float32(y)
			}
		}
	}
}

// QKNormRoPERefArgs mirrors QKNormRoPEArgs.
type QKNormRoPERefArgs struct {
	QKV     []uint16
	Ld      int
	NQ, NK  int
	HD      int
	QW, KW  []float32
	Eps     float32
	Pos     []int32
	InvFreq []float32
	T       int
}

// QKNormRoPERef is rls_qk_norm_rope's reference. The angle is the float32
// product pos·inv_freq[i], as in the kernel and in transformers' Qwen3
// rotary embedding (float32 inv_freq and positions).
func QKNormRoPERef(a QKNormRoPERefArgs) {
	half := a.HD / 2
	y := make([]float64, a.HD)
	for t := 0; t < a.T; t++ {
		for head := 0; head < a.NQ+a.NK; head++ {
			x := a.QKV[t*a.Ld+head*a.HD : t*a.Ld+(head+1)*a.HD]
			w := a.QW
			if head >= a.NQ {
				w = a.KW
			}
			k := 1.0
			if w != nil {
				var ss float64
				for _, h := range x {
					v := float64(H2F(h))
					ss += v * v
				}
				k = 1 / math.Sqrt(ss/float64(a.HD)+float64(a.Eps))
			}
			for i, h := range x {
				y[i] = float64(H2F(h)) * k
				if w != nil {
					y[i] *= float64(w[i])
				}
			}
			p := float32(a.Pos[t])
			for i := 0; i < half; i++ {
				ang := float64(p * a.InvFreq[i])
				s, c := math.Sincos(ang)
				x[i] = f2h64(y[i]*c - y[i+half]*s)
				x[i+half] = f2h64(y[i+half]*c + y[i]*s)
			}
		}
	}
}

// SiLU is x·sigmoid(x) (Qwen3 hidden_act "silu").
func SiLU(x float64) float64 { return x / (1 + math.Exp(-x)) }

// SwiGLURef is rls_swiglu's reference: gu is [rows, 2n], out [rows, n].
func SwiGLURef(gu []uint16, n, rowCount int, out []uint16) {
	for t := 0; t < rowCount; t++ {
		for i := 0; i < n; i++ {
			g, u := float64(H2F(gu[t*2*n+i])), float64(H2F(gu[t*2*n+n+i]))
			out[t*n+i] = f2h64(SiLU(g) * u)
		}
	}
}

// EmbedGatherRef is rls_embed_gather's reference.
func EmbedGatherRef(ids []int32, e []uint16, h int, resid []float32) {
	for t, id := range ids {
		for i := 0; i < h; i++ {
			resid[t*h+i] = H2F(e[int(id)*h+i])
		}
	}
}

// GatherF32Ref is rls_gather_f32's reference.
func GatherF32Ref(src []float32, rowIdx []int32, h int, dst []float32) {
	for i, r := range rowIdx {
		copy(dst[i*h:(i+1)*h], src[int(r)*h:(int(r)+1)*h])
	}
}

// Dot2Ref is rls_dot2's reference.
func Dot2Ref(x, w []float32, h, b int, out []float32) {
	for i := 0; i < b; i++ {
		var s0, s1 float64
		for j := 0; j < h; j++ {
			s0 += float64(x[i*h+j]) * float64(w[j])
			s1 += float64(x[i*h+j]) * float64(w[h+j])
		}
		out[2*i], out[2*i+1] = float32(s0), float32(s1)
	}
}

// PoolRef is rls_pool's reference.
func PoolRef(x []float32, cu []int32, h int, cls, normalize bool, out []float32) {
	v := make([]float64, h)
	for b := 0; b+1 < len(cu); b++ {
		lo, n := int(cu[b]), int(cu[b+1]-cu[b])
		clear(v)
		if n > 0 {
			for i := range v {
				if cls {
					v[i] = float64(x[lo*h+i])
					continue
				}
				for t := 0; t < n; t++ {
					v[i] += float64(x[(lo+t)*h+i])
				}
				v[i] /= float64(n)
			}
		}
		var ss float64
		for _, e := range v {
			ss += e * e
		}
		k := 1.0
		if normalize && ss > 0 {
			k = 1 / math.Sqrt(ss)
		}
		for i, e := range v {
			out[b*h+i] = float32(e * k)
		}
	}
}

// AttentionRefArgs mirrors AttentionArgs (offsets and strides in elements).
type AttentionRefArgs struct {
	QKV                 []uint16
	Ld                  int
	QOff, KOff, VOff    int
	QBias, KBias, VBias []float32
	NH, NKV, HD         int
	Cu                  []int32
	Scale               float32
	Causal, QLast       bool
	Out                 []uint16
	LdOut               int
}

// AttentionRef is rls_attn's reference: exact softmax attention in
// float64 over the fp16 inputs (bias added and rounded to fp16, as the
// kernel loads them), output rounded to fp16. The kernel rounds the
// probabilities to fp16 for its tensor-core product with V, so it agrees
// with this to about 1e-3 relative, not bit for bit.
func AttentionRef(a AttentionRefArgs) error {
	if a.NKV < 1 || a.NH%a.NKV != 0 {
		return fmt.Errorf("kernels: attention ref: %d heads, %d kv heads", a.NH, a.NKV)
	}
	load := func(row, col int, bias []float32, d int) float64 {
		v := a.QKV[row*a.Ld+col+d]
		if bias == nil {
			return float64(H2F(v))
		}
		return float64(H2F(F2H(H2F(v) + bias[d])))
	}
	group := a.NH / a.NKV
	for b := 0; b+1 < len(a.Cu); b++ {
		s0, L := int(a.Cu[b]), int(a.Cu[b+1]-a.Cu[b])
		first := 0
		if a.QLast {
			first = L - 1
		}
		for h := 0; h < a.NH; h++ {
			kh := h / group
			var qb, kb, vb []float32
			if a.QBias != nil {
				qb = a.QBias[h*a.HD : (h+1)*a.HD]
			}
			if a.KBias != nil {
				kb = a.KBias[kh*a.HD : (kh+1)*a.HD]
			}
			if a.VBias != nil {
				vb = a.VBias[kh*a.HD : (kh+1)*a.HD]
			}
			w := make([]float64, L)
			o := make([]float64, a.HD)
			for i := max(first, 0); i < L; i++ {
				end := L
				if a.Causal {
					end = i + 1
				}
				m := math.Inf(-1)
				for j := 0; j < end; j++ {
					var s float64
					for d := 0; d < a.HD; d++ {
						s += load(s0+i, a.QOff+h*a.HD, qb, d) * load(s0+j, a.KOff+kh*a.HD, kb, d)
					}
					w[j] = s * float64(a.Scale)
					m = max(m, w[j])
				}
				var z float64
				for j := 0; j < end; j++ {
					w[j] = math.Exp(w[j] - m)
					z += w[j]
				}
				clear(o)
				for j := 0; j < end; j++ {
					for d := 0; d < a.HD; d++ {
						o[d] += w[j] / z * load(s0+j, a.VOff+kh*a.HD, vb, d)
					}
				}
				row := s0 + i
				if a.QLast {
					row = b
				}
				for d, v := range o {
					a.Out[row*a.LdOut+h*a.HD+d] = f2h64(v)
				}
			}
		}
	}
	return nil
}
