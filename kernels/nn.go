package kernels

import (
	_ "embed"
	"errors"
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/cuda"
)

// The transformer kernels of nn.cu (the non-GEMM parts of the BERT and
// Qwen3 forward passes of package transformer). Each builder below checks
// its arguments and returns the Launch (kernel name, grid, block, parameter
// list) that NN.Run enqueues on a GPU and that kernelemu runs on the CPU;
// each kernel has a reference in nnref.go. Shapes follow nn.cu: a batch is B
// sequences packed into T token rows, cu holds the B+1 row offsets, fp16
// matrices are row-major, 1-D parameters fp32.

// The images embedded in the binary; regenerate with `make kernels`.
var (
	//go:embed nn_sm80.ptx
	nnPTXSM80 []byte
	//go:embed nn_sm90.ptx
	nnPTXSM90 []byte
	//go:embed nn_sm90.cubin
	nnCubinSM90 []byte
)

// Block sizes nn.cu is written for (RLS_ROW_THREADS, RLS_ATT_THREADS).
const (
	RowThreads       = 256
	AttentionThreads = 128
	// AttentionTile is the query rows per attention block (RLS_ATT_BM).
	AttentionTile = 64
)

// NNKernels are the entry points of nn.cu.
var NNKernels = []string{
	"rls_embed_ln", "rls_bias_ln", "rls_bias_gelu", "rls_rmsnorm", "rls_qk_norm_rope", "rls_swiglu",
	"rls_embed_gather", "rls_gather_f32", "rls_dot2", "rls_pool",
	"rls_attn_hd16", "rls_attn_hd32", "rls_attn_hd64", "rls_attn_hd128",
}

// AttentionHeadDims are the head sizes rls_attn is compiled for.
var AttentionHeadDims = []int{16, 32, 64, 128}

// ErrBadLaunch is wrapped by the builders' errors: the arguments break a
// kernel's contract (sizes, alignment, null pointers).
var ErrBadLaunch = errors.New("kernels: bad launch arguments")

// Launch is one kernel launch: the kernel's name in nn.cu or scan.cu, its
// grid and block, its dynamic shared memory in bytes (0 for the nn.cu
// kernels), and its parameters in the kernel's order (cuda.DevPtr, int32,
// int64 or float32, exactly the C types).
type Launch struct {
	Kernel      string
	Grid, Block cuda.Dim3
	Shared      int
	Args        []any
}

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadLaunch}, args...)...)
}

func rows(kernel string, n int, args ...any) Launch {
	return Launch{Kernel: kernel, Grid: cuda.Dim3{X: uint32(n), Y: 1, Z: 1}, Block: cuda.Dim3{X: RowThreads, Y: 1, Z: 1}, Args: args}
}

// strided is the grid of a grid-stride kernel over work items (at least
// one block, at most 65,535).
func strided(kernel string, work int64, args ...any) Launch {
	blocks := min(max((work+RowThreads-1)/RowThreads, 1), 65535)
	return Launch{Kernel: kernel, Grid: cuda.Dim3{X: uint32(blocks), Y: 1, Z: 1}, Block: cuda.Dim3{X: RowThreads, Y: 1, Z: 1}, Args: args}
}

func checkRows(what string, h, t int) error {
	switch {
	case h < 1 || h > 1<<20:
		return badf("%s: width %d outside [1, 2^20]", what, h)
	case t < 1 || t > math.MaxInt32:
		return badf("%s: %d rows outside [1, 2^31)", what, t)
	}
	return nil
}

func nonNil(what string, ps ...cuda.DevPtr) error {
	for i, p := range ps {
		if p == 0 {
			return badf("%s: required pointer %d is null", what, i)
		}
	}
	return nil
}

// EmbedLNArgs are rls_embed_ln's: BERT embeddings and their LayerNorm.
type EmbedLNArgs struct {
	IDs, Pos, Types       cuda.DevPtr // int32 [T]; Types 0: token type 0 everywhere
	Word, PosEmb, TypeEmb cuda.DevPtr // fp16 [vocab, H], [positions, H], [types, H]; TypeEmb 0: none
	Gamma, Beta           cuda.DevPtr // fp32 [H]
	Eps                   float32
	H, T                  int
	Resid                 cuda.DevPtr // fp32 [T, H] out
	XH                    cuda.DevPtr // fp16 [T, H] out
}

// EmbedLN is rls_embed_ln: one block of RowThreads per token.
func EmbedLN(a EmbedLNArgs) (Launch, error) {
	if err := checkRows("embed_ln", a.H, a.T); err != nil {
		return Launch{}, err
	}
	if err := nonNil("embed_ln", a.IDs, a.Pos, a.Word, a.PosEmb, a.Gamma, a.Beta, a.Resid, a.XH); err != nil {
		return Launch{}, err
	}
	return rows("rls_embed_ln", a.T, a.IDs, a.Pos, a.Types, a.Word, a.PosEmb, a.TypeEmb, a.Gamma, a.Beta, a.Eps,
		int32(a.H), int32(a.T), a.Resid, a.XH), nil
}

// BiasLNArgs are rls_bias_ln's: resid = LayerNorm(resid + Bias), XH = fp16(resid).
type BiasLNArgs struct {
	Resid       cuda.DevPtr // fp32 [T, H], in and out
	Bias        cuda.DevPtr // fp32 [H] or 0
	Gamma, Beta cuda.DevPtr // fp32 [H]
	Eps         float32
	H, T        int
	XH          cuda.DevPtr // fp16 [T, H] out
}

// BiasLN is rls_bias_ln: one block of RowThreads per row.
func BiasLN(a BiasLNArgs) (Launch, error) {
	if err := checkRows("bias_ln", a.H, a.T); err != nil {
		return Launch{}, err
	}
	if err := nonNil("bias_ln", a.Resid, a.Gamma, a.Beta, a.XH); err != nil {
		return Launch{}, err
	}
	return rows("rls_bias_ln", a.T, a.Resid, a.Bias, a.Gamma, a.Beta, a.Eps, int32(a.H), int32(a.T), a.XH), nil
}

// BiasGELU is rls_bias_gelu: x[e] = gelu(x[e] + bias[e % n]) in place for
// the rows × n fp16 matrix x (bias fp32 [n] or 0).
func BiasGELU(x, bias cuda.DevPtr, n, rowCount int) (Launch, error) {
	if err := checkRows("bias_gelu", n, rowCount); err != nil {
		return Launch{}, err
	}
	if err := nonNil("bias_gelu", x); err != nil {
		return Launch{}, err
	}
	if n%8 == 0 && x%16 != 0 {
		return Launch{}, badf("bias_gelu: x %#x is not 16-byte aligned", uint64(x))
	}
	total := int64(n) * int64(rowCount)
	work := total
	if n%8 == 0 {
		work = total / 8
	}
	return strided("rls_bias_gelu", work, x, bias, int32(n), total), nil
}

// RMSNormArgs are rls_rmsnorm's: row i of OutH/OutF is RMSNorm(X[Rows[i]]) * W.
type RMSNormArgs struct {
	X          cuda.DevPtr // fp32 [*, H]
	Rows       cuda.DevPtr // int32 [T] or 0 (row i reads row i)
	W          cuda.DevPtr // fp32 [H]
	Eps        float32
	H, T       int
	OutH, OutF cuda.DevPtr // fp16 / fp32 [T, H]; either may be 0, not both
}

// RMSNorm is rls_rmsnorm: one block of RowThreads per output row.
func RMSNorm(a RMSNormArgs) (Launch, error) {
	if err := checkRows("rmsnorm", a.H, a.T); err != nil {
		return Launch{}, err
	}
	if err := nonNil("rmsnorm", a.X, a.W); err != nil {
		return Launch{}, err
	}
	if a.OutH == 0 && a.OutF == 0 {
		return Launch{}, badf("rmsnorm: no output")
	}
	return rows("rls_rmsnorm", a.T, a.X, a.Rows, a.W, a.Eps, int32(a.H), int32(a.T), a.OutH, a.OutF), nil
}

// QKNormRoPEArgs are rls_qk_norm_rope's (Qwen3's q_norm/k_norm and rotary
// embedding, in place on the q and k heads of each row of QKV).
type QKNormRoPEArgs struct {
	QKV     cuda.DevPtr // fp16 [T, Ld]: NQ q heads, then NK k heads, HD wide each, from column 0
	Ld      int64       // row stride in elements
	NQ, NK  int
	HD      int         // head size, even
	QW, KW  cuda.DevPtr // fp32 [HD] norm gains, or 0 for no norm
	Eps     float32
	Pos     cuda.DevPtr // int32 [T] positions
	InvFreq cuda.DevPtr // fp32 [HD/2]: theta^(-2i/HD)
	T       int
}

// QKNormRoPE is rls_qk_norm_rope: one warp per (head, token), four per block.
func QKNormRoPE(a QKNormRoPEArgs) (Launch, error) {
	switch {
	case a.HD < 2 || a.HD%2 != 0 || a.HD > 1024:
		return Launch{}, badf("qk_norm_rope: head size %d must be even and at most 1024", a.HD)
	case a.NQ < 0 || a.NK < 0 || a.NQ+a.NK < 1:
		return Launch{}, badf("qk_norm_rope: %d q and %d k heads", a.NQ, a.NK)
	case a.Ld < int64(a.NQ+a.NK)*int64(a.HD):
		return Launch{}, badf("qk_norm_rope: row stride %d below %d heads of %d", a.Ld, a.NQ+a.NK, a.HD)
	case a.T < 1 || a.T > 65535:
		return Launch{}, badf("qk_norm_rope: %d rows outside [1, 65535] (grid y)", a.T)
	}
	if err := nonNil("qk_norm_rope", a.QKV, a.Pos, a.InvFreq); err != nil {
		return Launch{}, err
	}
	return Launch{Kernel: "rls_qk_norm_rope", Grid: cuda.Dim3{X: uint32((a.NQ + a.NK + 3) / 4), Y: uint32(a.T), Z: 1},
		Block: cuda.Dim3{X: 128, Y: 1, Z: 1},
		Args:  []any{a.QKV, a.Ld, int32(a.NQ), int32(a.NK), int32(a.HD), a.QW, a.KW, a.Eps, a.Pos, a.InvFreq, int32(a.T)}}, nil
}

// SwiGLU is rls_swiglu: out[t, i] = silu(gu[t, i]) * gu[t, n+i] for the
// [rows, 2n] fp16 matrix gu and the [rows, n] fp16 out.
func SwiGLU(gu cuda.DevPtr, n, rowCount int, out cuda.DevPtr) (Launch, error) {
	if err := checkRows("swiglu", n, rowCount); err != nil {
		return Launch{}, err
	}
	if err := nonNil("swiglu", gu, out); err != nil {
		return Launch{}, err
	}
	if n%8 == 0 && (gu%16 != 0 || out%16 != 0) {
		return Launch{}, badf("swiglu: gu %#x or out %#x is not 16-byte aligned", uint64(gu), uint64(out))
	}
	work := int64(n) * int64(rowCount)
	if n%8 == 0 {
		work /= 8
	}
	return strided("rls_swiglu", work, gu, int32(n), int64(rowCount), out), nil
}

// EmbedGather is rls_embed_gather: resid[t] = float32(e[ids[t]]) for the
// fp16 table e [vocab, h], ids int32 [t], resid fp32 [t, h].
func EmbedGather(ids, e cuda.DevPtr, h, t int, resid cuda.DevPtr) (Launch, error) {
	if err := checkRows("embed_gather", h, t); err != nil {
		return Launch{}, err
	}
	if err := nonNil("embed_gather", ids, e, resid); err != nil {
		return Launch{}, err
	}
	return strided("rls_embed_gather", int64(h)*int64(t), ids, e, int32(h), int32(t), resid), nil
}

// GatherF32 is rls_gather_f32: dst[i] = src[rowIdx[i]] for i < n, rows of h fp32.
func GatherF32(src, rowIdx cuda.DevPtr, h, n int, dst cuda.DevPtr) (Launch, error) {
	if err := checkRows("gather_f32", h, n); err != nil {
		return Launch{}, err
	}
	if err := nonNil("gather_f32", src, rowIdx, dst); err != nil {
		return Launch{}, err
	}
	return strided("rls_gather_f32", int64(h)*int64(n), src, rowIdx, int32(h), int32(n), dst), nil
}

// Dot2 is rls_dot2: out[2b+j] = x[b] · w[j] for x fp32 [b, h], w fp32 [2, h].
func Dot2(x, w cuda.DevPtr, h, b int, out cuda.DevPtr) (Launch, error) {
	if err := checkRows("dot2", h, b); err != nil {
		return Launch{}, err
	}
	if err := nonNil("dot2", x, w, out); err != nil {
		return Launch{}, err
	}
	return rows("rls_dot2", b, x, w, int32(h), int32(b), out), nil
}

// Pool is rls_pool: out[b] = the mean (cls: the first) of x's rows
// cu[b] .. cu[b+1]-1, L2-normalised when normalize; x fp32 [T, h], cu int32
// [b+1], out fp32 [b, h].
func Pool(x, cu cuda.DevPtr, h, b int, cls, normalize bool, out cuda.DevPtr) (Launch, error) {
	if err := checkRows("pool", h, b); err != nil {
		return Launch{}, err
	}
	if err := nonNil("pool", x, cu, out); err != nil {
		return Launch{}, err
	}
	return rows("rls_pool", b, x, cu, int32(h), int32(b), b2i(cls), b2i(normalize), out), nil
}

func b2i(v bool) int32 {
	if v {
		return 1
	}
	return 0
}

// AttentionArgs are rls_attn_hd*'s; see nn.cu. Q, K and V of token row r
// are columns [QOff + h·HD, …), [KOff + kh·HD, …), [VOff + kh·HD, …) of row r
// of QKV (fp16, row stride Ld), with kh = h / (NH/NKV).
type AttentionArgs struct {
	QKV                 cuda.DevPtr
	Ld                  int64
	QOff, KOff, VOff    int
	QBias, KBias, VBias cuda.DevPtr // fp32 [NH·HD], [NKV·HD], [NKV·HD], or 0
	NH, NKV, HD         int
	Cu                  cuda.DevPtr // int32 [B+1]
	B                   int
	MaxLen              int // longest sequence (sets the grid)
	Scale               float32
	Causal              bool
	QLast               bool        // only each sequence's last query, to output row b
	Out                 cuda.DevPtr // fp16; row stride LdOut
	LdOut               int64
}

// Attention is rls_attn_hd{HD}: grid (ceil(MaxLen/64), NH, B) (x = 1 with
// QLast), AttentionThreads threads.
func Attention(a AttentionArgs) (Launch, error) {
	supported := false
	for _, d := range AttentionHeadDims {
		supported = supported || a.HD == d
	}
	switch {
	case !supported:
		return Launch{}, badf("attention: head size %d not in %v", a.HD, AttentionHeadDims)
	case a.NH < 1 || a.NKV < 1 || a.NH%a.NKV != 0 || a.NH > 65535:
		return Launch{}, badf("attention: %d query heads are not a multiple of %d kv heads (or over 65535)", a.NH, a.NKV)
	case a.B < 1 || a.B > 65535:
		return Launch{}, badf("attention: %d sequences outside [1, 65535]", a.B)
	case a.MaxLen < 1 || a.MaxLen > math.MaxInt32/2:
		return Launch{}, badf("attention: max length %d", a.MaxLen)
	case a.Ld%8 != 0 || a.QOff%8 != 0 || a.KOff%8 != 0 || a.VOff%8 != 0:
		return Launch{}, badf("attention: row stride %d and offsets %d/%d/%d must be multiples of 8 (16-byte loads)", a.Ld, a.QOff, a.KOff, a.VOff)
	case a.QOff < 0 || a.KOff < 0 || a.VOff < 0 ||
		int64(a.QOff+a.NH*a.HD) > a.Ld || int64(a.KOff+a.NKV*a.HD) > a.Ld || int64(a.VOff+a.NKV*a.HD) > a.Ld:
		return Launch{}, badf("attention: heads outside the %d-wide rows", a.Ld)
	case a.LdOut%2 != 0 || a.LdOut < int64(a.NH*a.HD):
		return Launch{}, badf("attention: output row stride %d (even, at least %d)", a.LdOut, a.NH*a.HD)
	case !(a.Scale > 0) || math.IsInf(float64(a.Scale), 0):
		return Launch{}, badf("attention: scale %v", a.Scale)
	}
	if err := nonNil("attention", a.QKV, a.Cu, a.Out); err != nil {
		return Launch{}, err
	}
	if a.QKV%16 != 0 || a.Out%4 != 0 {
		return Launch{}, badf("attention: qkv %#x must be 16-byte and out %#x 4-byte aligned", uint64(a.QKV), uint64(a.Out))
	}
	gx := (a.MaxLen + AttentionTile - 1) / AttentionTile
	if a.QLast {
		gx = 1
	}
	return Launch{Kernel: fmt.Sprintf("rls_attn_hd%d", a.HD), Grid: cuda.Dim3{X: uint32(gx), Y: uint32(a.NH), Z: uint32(a.B)},
		Block: cuda.Dim3{X: AttentionThreads, Y: 1, Z: 1},
		Args: []any{a.QKV, a.Ld, int32(a.QOff), int32(a.KOff), int32(a.VOff), a.QBias, a.KBias, a.VBias,
			int32(a.NH), int32(a.NKV), a.Cu, a.Scale, b2i(a.Causal), b2i(a.QLast), a.Out, a.LdOut}}, nil
}

// NN is nn.cu loaded on one device. Use it only inside Device.Do of that
// device; it is released with the device or by Close.
type NN struct {
	m     *cuda.Module
	fns   map[string]*cuda.Function
	Image string // "sm_90 cubin", "sm_90 ptx" or "sm_80 ptx"
}

// LoadNN loads nn.cu's image for c's device, chosen as Load chooses topk's:
// the sm_90 cubin on compute capability 9.0, else the sm_90 PTX on ≥ 9.0 or
// the sm_80 PTX on ≥ 8.0 (the tensor-core mma.sync.m16n8k16 of rls_attn
// needs 8.0). Errors: ErrUnsupportedDevice below 8.0, *cuda.Error.
func LoadNN(c *cuda.Ctx) (*NN, error) {
	info := c.Device().Info()
	cc := info.Major*10 + info.Minor
	type cand struct {
		name string
		img  []byte
	}
	var cands []cand
	switch {
	case cc == 90:
		cands = []cand{{"sm_90 cubin", nnCubinSM90}, {"sm_90 ptx", nnPTXSM90}}
	case cc > 90:
		cands = []cand{{"sm_90 ptx", nnPTXSM90}}
	case cc >= 80:
		cands = []cand{{"sm_80 ptx", nnPTXSM80}}
	default:
		return nil, fmt.Errorf("%w: %s is %d.%d", ErrUnsupportedDevice, info.Name, info.Major, info.Minor)
	}
	var errs []error
	for _, cd := range cands {
		m, err := c.LoadModule(cd.img)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", cd.name, err))
			continue
		}
		nn := &NN{m: m, fns: map[string]*cuda.Function{}, Image: cd.name}
		for _, name := range NNKernels {
			f, err := c.Function(m, name)
			if err != nil {
				m.Close()
				return nil, err
			}
			nn.fns[name] = f
		}
		return nn, nil
	}
	return nil, fmt.Errorf("kernels: load nn: %w", errors.Join(errs...))
}

// Run enqueues l on stream s.
func (n *NN) Run(c *cuda.Ctx, s *cuda.Stream, l Launch) error {
	f, ok := n.fns[l.Kernel]
	if !ok {
		return badf("no kernel %q in nn.cu", l.Kernel)
	}
	return c.Launch(f, l.Grid, l.Block, l.Shared, s, l.Args...)
}

// Close unloads the module.
func (n *NN) Close() error { return n.m.Close() }
