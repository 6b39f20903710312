package kernels_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
	"github.com/rlsearch/rlsearch/kernels"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
)

// dev is where a test runs nn.cu: the CPU emulator or a GPU.
type dev interface {
	Alloc(int64) (cuda.DevPtr, error)
	Free(cuda.DevPtr)
	CopyHtoD(cuda.DevPtr, []byte) error
	CopyDtoH([]byte, cuda.DevPtr) error
	Launch(kernels.Launch) error
}

// gpuDev runs on a real GPU inside Device.Do; every launch is followed by
// a stream synchronisation so that a fault names its kernel.
type gpuDev struct {
	c    *cuda.Ctx
	s    *cuda.Stream
	nn   *kernels.NN
	bufs map[cuda.DevPtr]*cuda.Buffer
}

func (g *gpuDev) Alloc(n int64) (cuda.DevPtr, error) {
	b, err := g.c.Alloc(n)
	if err != nil {
		return 0, err
	}
	g.bufs[b.Ptr(0)] = b
	return b.Ptr(0), nil
}
func (g *gpuDev) Free(p cuda.DevPtr) { g.bufs[p].Close(); delete(g.bufs, p) }
func (g *gpuDev) CopyHtoD(p cuda.DevPtr, b []byte) error {
	return g.c.CopyHtoD(g.bufs[p], 0, b)
}
func (g *gpuDev) CopyDtoH(b []byte, p cuda.DevPtr) error { return g.c.CopyDtoH(b, g.bufs[p], 0) }
func (g *gpuDev) Launch(l kernels.Launch) error {
	if err := g.nn.Run(g.c, g.s, l); err != nil {
		return err
	}
	return g.c.Sync(g.s)
}

// forEachDev runs fn on the emulator (threads in both orders) and on GPU 0
// (skipped without one, failed with REQUIRE_GPU=1).
func forEachDev(t *testing.T, fn func(t *testing.T, d dev)) {
	t.Run("emu", func(t *testing.T) {
		e := kernelemu.Open(t)
		for _, rev := range []bool{false, true} {
			t.Run(fmt.Sprintf("reverse=%v", rev), func(t *testing.T) {
				e.SetReverse(rev)
				defer e.SetReverse(false)
				fn(t, e)
			})
		}
	})
	t.Run("gpu", func(t *testing.T) {
		device := cudatest.Device(t)
		err := device.Do(func(c *cuda.Ctx) error {
			nn, err := kernels.LoadNN(c)
			if err != nil {
				return err
			}
			defer nn.Close()
			s, err := c.NewStream()
			if err != nil {
				return err
			}
			defer s.Close()
			t.Logf("nn.cu loaded as %s on %s", nn.Image, device.Info().Name)
			fn(t, &gpuDev{c: c, s: s, nn: nn, bufs: map[cuda.DevPtr]*cuda.Buffer{}})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// Buffers: upload and download helpers (fatal on error).
func put(t *testing.T, d dev, b []byte) cuda.DevPtr {
	t.Helper()
	if len(b) == 0 {
		b = make([]byte, 4)
	}
	p, err := d.Alloc(int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Free(p) })
	if err := d.CopyHtoD(p, b); err != nil {
		t.Fatal(err)
	}
	return p
}

// poison allocates n bytes filled with NaN bytes (0xff: NaN in fp16 and fp32).
func poison(t *testing.T, d dev, n int) cuda.DevPtr {
	t.Helper()
	return put(t, d, bytes.Repeat([]byte{0xff}, n))
}

func get(t *testing.T, d dev, p cuda.DevPtr, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if err := d.CopyDtoH(b, p); err != nil {
		t.Fatal(err)
	}
	return b
}

func launch(t *testing.T, d dev, l kernels.Launch, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Launch(l); err != nil {
		t.Fatalf("%s: %v", l.Kernel, err)
	}
}

func f32b(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}
func bf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
func i32b(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}
func u16b(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return b
}
func bu16(b []byte) []uint16 {
	v := make([]uint16, len(b)/2)
	for i := range v {
		v[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return v
}

func randF32(r *rand.Rand, n int, mean, std float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(mean + std*r.NormFloat64())
	}
	return v
}
func randF16(r *rand.Rand, n int, std float64) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = kernels.F2H(float32(std * r.NormFloat64()))
	}
	return v
}

// closeF32 fails unless got and want agree to tol relative to the larger
// of |want| and 1 (every element written: NaN never passes).
func closeF32(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if !(math.Abs(g-w) <= tol*max(1, math.Abs(w))) {
			t.Fatalf("%s[%d] = %v, want %v (tolerance %g)", what, i, g, w, tol)
		}
	}
}

// closeF16 fails unless the fp16 values are within ulps units in the
// last place of binary16 (or tol absolute near zero).
func closeF16(t *testing.T, what string, got, want []uint16, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := float64(kernels.H2F(got[i])), float64(kernels.H2F(want[i]))
		if !(math.Abs(g-w) <= tol*max(math.Abs(w), 1e-2)) {
			t.Fatalf("%s[%d] = %v (%#04x), want %v (%#04x), tolerance %g", what, i, g, got[i], w, want[i], tol)
		}
	}
}

// cuOf returns the offsets of sequences of the given lengths.
func cuOf(lens []int) []int32 {
	cu := []int32{0}
	for _, l := range lens {
		cu = append(cu, cu[len(cu)-1]+int32(l))
	}
	return cu
}

// posOf returns each token's position in its sequence.
func posOf(lens []int) []int32 {
	var p []int32
	for _, l := range lens {
		for i := range l {
			p = append(p, int32(i))
		}
	}
	return p
}

const f16ulp = 1.0 / 1024 // binary16 spacing relative to the value (2^-10)

func TestEmbedLN(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(1, 1))
		for _, h := range []int{1, 3, 31, 33, 384} {
			for _, withType := range []bool{true, false} {
				lens := []int{3, 1, 5}
				T := 9
				const vocab, npos, ntype = 50, 8, 2
				ids := make([]int32, T)
				types := make([]int32, T)
				for i := range ids {
					ids[i], types[i] = int32(r.IntN(vocab)), int32(r.IntN(ntype))
				}
				pos := posOf(lens)
				word, pe, te := randF16(r, vocab*h, 1), randF16(r, npos*h, 1), randF16(r, ntype*h, 1)
				gamma, beta := randF32(r, h, 1, 0.1), randF32(r, h, 0, 0.1)
				ref := kernels.EmbedLNRefArgs{IDs: ids, Pos: pos, Word: word, PosEmb: pe, Gamma: gamma, Beta: beta,
					Eps: 1e-12, H: h, T: T, Resid: make([]float32, T*h), XH: make([]uint16, T*h)}
				a := kernels.EmbedLNArgs{IDs: put(t, d, i32b(ids)), Pos: put(t, d, i32b(pos)), Word: put(t, d, u16b(word)),
					PosEmb: put(t, d, u16b(pe)), Gamma: put(t, d, f32b(gamma)), Beta: put(t, d, f32b(beta)), Eps: 1e-12,
					H: h, T: T, Resid: poison(t, d, 4*T*h), XH: poison(t, d, 2*T*h)}
				if withType {
					ref.Types, ref.TypeEmb = types, te
					a.Types, a.TypeEmb = put(t, d, i32b(types)), put(t, d, u16b(te))
				}
				kernels.EmbedLNRef(ref)
				l, err := kernels.EmbedLN(a)
				launch(t, d, l, err)
				name := fmt.Sprintf("h=%d types=%v", h, withType)
				if h == 1 { // a 1-wide LayerNorm is beta exactly
					closeF32(t, name+" resid", bf32(get(t, d, a.Resid, 4*T*h)), ref.Resid, 1e-6)
					continue
				}
				closeF32(t, name+" resid", bf32(get(t, d, a.Resid, 4*T*h)), ref.Resid, 2e-5)
				closeF16(t, name+" xh", bu16(get(t, d, a.XH, 2*T*h)), ref.XH, f16ulp)
			}
		}
	})
}

func TestBiasLN(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(2, 1))
		for _, h := range []int{3, 32, 33, 768} {
			for _, withBias := range []bool{true, false} {
				T := 4
				x := randF32(r, T*h, 0.5, 3)
				bias := randF32(r, h, 0, 1)
				gamma, beta := randF32(r, h, 1, 0.1), randF32(r, h, 0, 0.1)
				ref := kernels.BiasLNRefArgs{Resid: slices.Clone(x), Gamma: gamma, Beta: beta, Eps: 1e-5, H: h, T: T, XH: make([]uint16, T*h)}
				a := kernels.BiasLNArgs{Resid: put(t, d, f32b(x)), Gamma: put(t, d, f32b(gamma)), Beta: put(t, d, f32b(beta)),
					Eps: 1e-5, H: h, T: T, XH: poison(t, d, 2*T*h)}
				if withBias {
					ref.Bias, a.Bias = bias, put(t, d, f32b(bias))
				}
				kernels.BiasLNRef(ref)
				l, err := kernels.BiasLN(a)
				launch(t, d, l, err)
				name := fmt.Sprintf("h=%d bias=%v", h, withBias)
				closeF32(t, name+" resid", bf32(get(t, d, a.Resid, 4*T*h)), ref.Resid, 2e-5)
				closeF16(t, name+" xh", bu16(get(t, d, a.XH, 2*T*h)), ref.XH, f16ulp)
			}
		}
	})
}

func TestBiasGELU(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(3, 1))
		for _, n := range []int{1, 7, 8, 24, 33, 3072} {
			rows := 5
			x := randF16(r, rows*n, 2)
			bias := randF32(r, n, 0, 1)
			want := slices.Clone(x)
			kernels.BiasGELURef(want, bias, n)
			px := put(t, d, u16b(x))
			l, err := kernels.BiasGELU(px, put(t, d, f32b(bias)), n, rows)
			launch(t, d, l, err)
			closeF16(t, fmt.Sprintf("n=%d", n), bu16(get(t, d, px, 2*rows*n)), want, f16ulp)
		}
	})
}

func TestRMSNorm(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(4, 1))
		for _, h := range []int{1, 31, 64, 1024} {
			for _, gather := range []bool{false, true} {
				T, src := 5, 7
				x := randF32(r, src*h, 0, 2)
				w := randF32(r, h, 1, 0.1)
				ref := kernels.RMSNormRefArgs{X: x, W: w, Eps: 1e-6, H: h, T: T, OutH: make([]uint16, T*h), OutF: make([]float32, T*h)}
				a := kernels.RMSNormArgs{X: put(t, d, f32b(x)), W: put(t, d, f32b(w)), Eps: 1e-6, H: h, T: T,
					OutH: poison(t, d, 2*T*h), OutF: poison(t, d, 4*T*h)}
				if gather {
					rows := []int32{6, 0, 3, 3, 1}
					ref.Rows, a.Rows = rows, put(t, d, i32b(rows))
				}
				kernels.RMSNormRef(ref)
				l, err := kernels.RMSNorm(a)
				launch(t, d, l, err)
				name := fmt.Sprintf("h=%d gather=%v", h, gather)
				closeF32(t, name+" f32", bf32(get(t, d, a.OutF, 4*T*h)), ref.OutF, 2e-5)
				closeF16(t, name+" f16", bu16(get(t, d, a.OutH, 2*T*h)), ref.OutH, f16ulp)
			}
		}
	})
}

// invFreq is RoPE's theta^(-2i/hd) in float32 (transformers' default rope init).
func invFreq(hd int, theta float64) []float32 {
	v := make([]float32, hd/2)
	for i := range v {
		v[i] = float32(1 / math.Pow(theta, float64(2*i)/float64(hd)))
	}
	return v
}

func TestQKNormRoPE(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(5, 1))
		for _, tc := range []struct{ nq, nk, hd int }{{4, 2, 16}, {3, 1, 128}, {1, 1, 2}, {5, 3, 66}} {
			for _, norm := range []bool{true, false} {
				pos := []int32{0, 1, 2, 0, 1, 63, 64, 699, 4095, 8191, 32767}
				T := len(pos)
				ld := (tc.nq+2*tc.nk)*tc.hd + 8
				qkv := randF16(r, T*ld, 1.5)
				inv := invFreq(tc.hd, 1e6)
				qw, kw := randF32(r, tc.hd, 1, 0.2), randF32(r, tc.hd, 1, 0.2)
				ref := kernels.QKNormRoPERefArgs{QKV: slices.Clone(qkv), Ld: ld, NQ: tc.nq, NK: tc.nk, HD: tc.hd, Eps: 1e-6, Pos: pos, InvFreq: inv, T: T}
				a := kernels.QKNormRoPEArgs{QKV: put(t, d, u16b(qkv)), Ld: int64(ld), NQ: tc.nq, NK: tc.nk, HD: tc.hd, Eps: 1e-6,
					Pos: put(t, d, i32b(pos)), InvFreq: put(t, d, f32b(inv)), T: T}
				if norm {
					ref.QW, ref.KW = qw, kw
					a.QW, a.KW = put(t, d, f32b(qw)), put(t, d, f32b(kw))
				}
				kernels.QKNormRoPERef(ref)
				l, err := kernels.QKNormRoPE(a)
				launch(t, d, l, err)
				// positions up to 32767 make angles of 10^4 radians: the float32 angle is the
				// same in both (rounded once), and float32 sin/cos there differ from float64's
				// by ~1e-6, below fp16's spacing.
				closeF16(t, fmt.Sprintf("%+v norm=%v", tc, norm), bu16(get(t, d, a.QKV, 2*T*ld)), ref.QKV, 2*f16ulp)
			}
		}
	})
}

func TestSwiGLU(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(6, 1))
		for _, n := range []int{1, 5, 8, 40, 3072} {
			rows := 3
			gu := randF16(r, rows*2*n, 2)
			want := make([]uint16, rows*n)
			kernels.SwiGLURef(gu, n, rows, want)
			out := poison(t, d, 2*rows*n)
			l, err := kernels.SwiGLU(put(t, d, u16b(gu)), n, rows, out)
			launch(t, d, l, err)
			closeF16(t, fmt.Sprintf("n=%d", n), bu16(get(t, d, out, 2*rows*n)), want, f16ulp)
		}
	})
}

func TestGathersDotPool(t *testing.T) {
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(7, 1))
		for _, h := range []int{1, 33, 768} {
			name := fmt.Sprintf("h=%d", h)
			// embed_gather
			ids := []int32{4, 0, 9, 4}
			e := randF16(r, 10*h, 1)
			want := make([]float32, len(ids)*h)
			kernels.EmbedGatherRef(ids, e, h, want)
			out := poison(t, d, 4*len(ids)*h)
			l, err := kernels.EmbedGather(put(t, d, i32b(ids)), put(t, d, u16b(e)), h, len(ids), out)
			launch(t, d, l, err)
			closeF32(t, name+" embed_gather", bf32(get(t, d, out, 4*len(ids)*h)), want, 0)
			// gather_f32
			src := randF32(r, 6*h, 0, 1)
			rows := []int32{5, 2, 2}
			want = make([]float32, len(rows)*h)
			kernels.GatherF32Ref(src, rows, h, want)
			out = poison(t, d, 4*len(rows)*h)
			l, err = kernels.GatherF32(put(t, d, f32b(src)), put(t, d, i32b(rows)), h, len(rows), out)
			launch(t, d, l, err)
			closeF32(t, name+" gather_f32", bf32(get(t, d, out, 4*len(rows)*h)), want, 0)
			// dot2
			x := randF32(r, 3*h, 0, 1)
			w := randF32(r, 2*h, 0, 1)
			want = make([]float32, 6)
			kernels.Dot2Ref(x, w, h, 3, want)
			out = poison(t, d, 24)
			l, err = kernels.Dot2(put(t, d, f32b(x)), put(t, d, f32b(w)), h, 3, out)
			launch(t, d, l, err)
			closeF32(t, name+" dot2", bf32(get(t, d, out, 24)), want, 1e-5*math.Sqrt(float64(h)))
			// pool: mean / cls, normalised or not, with an empty sequence
			lens := []int{3, 0, 1, 6}
			cu := cuOf(lens)
			xs := randF32(r, 10*h, 0.3, 1)
			for _, cls := range []bool{false, true} {
				for _, norm := range []bool{false, true} {
					want = make([]float32, len(lens)*h)
					kernels.PoolRef(xs, cu, h, cls, norm, want)
					out = poison(t, d, 4*len(lens)*h)
					l, err = kernels.Pool(put(t, d, f32b(xs)), put(t, d, i32b(cu)), h, len(lens), cls, norm, out)
					launch(t, d, l, err)
					closeF32(t, fmt.Sprintf("%s pool cls=%v norm=%v", name, cls, norm), bf32(get(t, d, out, 4*len(lens)*h)), want, 1e-5)
				}
			}
		}
	})
}

// attnCase is one attention configuration.
type attnCase struct {
	name          string
	nh, nkv, hd   int
	lens          []int
	causal, qlast bool
	bias          bool
}

func TestAttention(t *testing.T) {
	cases := []attnCase{
		{"bert hd64 bias", 2, 2, 64, []int{1, 17, 64, 65, 130}, false, false, true},
		{"bert hd32", 3, 3, 32, []int{5, 70}, false, false, true},
		{"qwen gqa hd128 causal", 4, 2, 128, []int{1, 63, 64, 129}, true, false, false},
		{"qwen hd16 causal", 4, 2, 16, []int{2, 100}, true, false, false},
		{"qwen last only", 4, 1, 64, []int{1, 9, 140}, true, true, false},
	}
	forEachDev(t, func(t *testing.T, d dev) {
		r := rand.New(rand.NewPCG(8, 1))
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				attentionCase(t, d, r, tc)
			})
		}
	})
}

func attentionCase(t *testing.T, d dev, r *rand.Rand, tc attnCase) {
	cu := cuOf(tc.lens)
	T := int(cu[len(cu)-1])
	qoff, koff, voff := 8, 8+tc.nh*tc.hd, 8+(tc.nh+tc.nkv)*tc.hd // a leading gap: offsets matter
	ld := voff + tc.nkv*tc.hd + 8
	qkv := randF16(r, T*ld, 1)
	ldOut := tc.nh*tc.hd + 2
	outRows := T
	if tc.qlast {
		outRows = len(tc.lens)
	}
	ref := kernels.AttentionRefArgs{QKV: qkv, Ld: ld, QOff: qoff, KOff: koff, VOff: voff, NH: tc.nh, NKV: tc.nkv, HD: tc.hd,
		Cu: cu, Scale: float32(1 / math.Sqrt(float64(tc.hd))), Causal: tc.causal, QLast: tc.qlast,
		Out: make([]uint16, outRows*ldOut), LdOut: ldOut}
	a := kernels.AttentionArgs{QKV: put(t, d, u16b(qkv)), Ld: int64(ld), QOff: qoff, KOff: koff, VOff: voff,
		NH: tc.nh, NKV: tc.nkv, HD: tc.hd, Cu: put(t, d, i32b(cu)), B: len(tc.lens), MaxLen: slices.Max(tc.lens),
		Scale: ref.Scale, Causal: tc.causal, QLast: tc.qlast, Out: poison(t, d, 2*outRows*ldOut), LdOut: int64(ldOut)}
	if tc.bias {
		qb, kb, vb := randF32(r, tc.nh*tc.hd, 0, 0.5), randF32(r, tc.nkv*tc.hd, 0, 0.5), randF32(r, tc.nkv*tc.hd, 0, 0.5)
		ref.QBias, ref.KBias, ref.VBias = qb, kb, vb
		a.QBias, a.KBias, a.VBias = put(t, d, f32b(qb)), put(t, d, f32b(kb)), put(t, d, f32b(vb))
	}
	for i := range ref.Out {
		ref.Out[i] = 0xffff // columns the kernel must not write stay NaN in both
	}
	if err := kernels.AttentionRef(ref); err != nil {
		t.Fatal(err)
	}
	l, err := kernels.Attention(a)
	launch(t, d, l, err)
	got := bu16(get(t, d, a.Out, 2*outRows*ldOut))
	// Probabilities are rounded to fp16 for the tensor-core product: compare
	// with an absolute tolerance against outputs of magnitude ~1.
	var worst float64
	for i := range got {
		w, g := ref.Out[i], got[i]
		if w == 0xffff {
			if g != 0xffff {
				t.Fatalf("wrote element %d (row %d, col %d) outside the heads' columns or rows", i, i/ldOut, i%ldOut)
			}
			continue
		}
		diff := math.Abs(float64(kernels.H2F(g)) - float64(kernels.H2F(w)))
		if !(diff <= 4e-3) {
			t.Fatalf("out[%d] (row %d, col %d) = %v, reference %v", i, i/ldOut, i%ldOut, kernels.H2F(g), kernels.H2F(w))
		}
		worst = max(worst, diff)
	}
	t.Logf("max abs diff %.2g over %d outputs", worst, len(got))
}

// TestBuildersRefuse: bad arguments are errors wrapping ErrBadLaunch, never launches.
func TestBuildersRefuse(t *testing.T) {
	good := kernels.AttentionArgs{QKV: 16, Ld: 192, QOff: 0, KOff: 64, VOff: 128, NH: 1, NKV: 1, HD: 64, Cu: 8, B: 1, MaxLen: 5, Scale: 0.125, Out: 32, LdOut: 64}
	if _, err := kernels.Attention(good); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	for name, mut := range map[string]func(*kernels.AttentionArgs){
		"head dim 48":  func(a *kernels.AttentionArgs) { a.HD = 48 },
		"gqa mismatch": func(a *kernels.AttentionArgs) { a.NH, a.NKV = 3, 2 },
		"odd offset":   func(a *kernels.AttentionArgs) { a.KOff = 65 },
		"narrow rows":  func(a *kernels.AttentionArgs) { a.Ld = 128 },
		"misaligned":   func(a *kernels.AttentionArgs) { a.QKV = 18 },
		"zero scale":   func(a *kernels.AttentionArgs) { a.Scale = 0 },
		"no sequences": func(a *kernels.AttentionArgs) { a.B = 0 },
		"null out":     func(a *kernels.AttentionArgs) { a.Out = 0 },
	} {
		a := good
		mut(&a)
		if _, err := kernels.Attention(a); !errors.Is(err, kernels.ErrBadLaunch) {
			t.Errorf("%s: error %v, want ErrBadLaunch", name, err)
		}
	}
	if _, err := kernels.RMSNorm(kernels.RMSNormArgs{X: 8, W: 8, H: 4, T: 1}); !errors.Is(err, kernels.ErrBadLaunch) {
		t.Errorf("rmsnorm without an output: %v", err)
	}
	if _, err := kernels.BiasGELU(18, 0, 16, 1); !errors.Is(err, kernels.ErrBadLaunch) {
		t.Errorf("misaligned vector gelu: %v", err)
	}
}

// TestEmulatorCatches shows that the emulator fails what a GPU would get
// wrong: a write past an allocation (gather into a buffer one row short).
func TestEmulatorCatches(t *testing.T) {
	e := kernelemu.Open(t)
	src := put(t, e, f32b(make([]float32, 4*8)))
	rows := put(t, e, i32b([]int32{0, 1, 2}))
	short := poison(t, e, 4*8*2)
	l, err := kernels.GatherF32(src, rows, 8, 3, short)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Launch(l); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("overflowing write not reported: %v", err)
	}
	if err := e.Launch(kernels.Launch{Kernel: "rls_pool", Grid: cuda.Dim3{X: 1, Y: 1, Z: 1}, Block: cuda.Dim3{X: 32, Y: 1, Z: 1}, Args: []any{src}}); err == nil {
		t.Fatal("a launch with too few arguments ran")
	}
}

// TestNNLaunchArgsMatchPTX: every builder passes the parameter sizes, in
// order, that the committed PTX declares.
func TestNNLaunchArgsMatchPTX(t *testing.T) {
	launches := map[string]kernels.Launch{}
	add := func(l kernels.Launch, err error) {
		if err != nil {
			t.Fatal(err)
		}
		launches[l.Kernel] = l
	}
	add(kernels.EmbedLN(kernels.EmbedLNArgs{IDs: 8, Pos: 8, Word: 8, PosEmb: 8, Gamma: 8, Beta: 8, H: 4, T: 1, Resid: 8, XH: 8}))
	add(kernels.BiasLN(kernels.BiasLNArgs{Resid: 8, Gamma: 8, Beta: 8, H: 4, T: 1, XH: 8}))
	add(kernels.BiasGELU(16, 0, 8, 1))
	add(kernels.RMSNorm(kernels.RMSNormArgs{X: 8, W: 8, H: 4, T: 1, OutF: 8}))
	add(kernels.QKNormRoPE(kernels.QKNormRoPEArgs{QKV: 8, Ld: 8, NQ: 1, NK: 1, HD: 4, Pos: 8, InvFreq: 8, T: 1}))
	add(kernels.SwiGLU(16, 8, 1, 16))
	add(kernels.EmbedGather(8, 8, 4, 1, 8))
	add(kernels.GatherF32(8, 8, 4, 1, 8))
	add(kernels.Dot2(8, 8, 4, 1, 8))
	add(kernels.Pool(8, 8, 4, 1, false, true, 8))
	for _, hd := range kernels.AttentionHeadDims {
		add(kernels.Attention(kernels.AttentionArgs{QKV: 16, Ld: int64(3 * hd), KOff: hd, VOff: 2 * hd, NH: 1, NKV: 1, HD: hd, Cu: 8, B: 1, MaxLen: 1, Scale: 1, Out: 8, LdOut: int64(hd)}))
	}
	if len(launches) != len(kernels.NNKernels) {
		t.Fatalf("built %d kernels, nn.cu has %d", len(launches), len(kernels.NNKernels))
	}
	for _, img := range []string{"nn_sm80.ptx", "nn_sm90.ptx"} {
		ptx, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		params := kernels.PTXParams(string(ptx))
		for name, l := range launches {
			t.Run(img+"/"+name, func(t *testing.T) { kernels.ArgsMatchPTX(t, params[name], l.Args) })
		}
	}
}
