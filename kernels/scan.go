package kernels

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/cuda"
)

// Constants of scan.cu (RLS_BM, RLS_MERGE_THREADS, RLS_FILTER_THREADS).
const (
	// ScanBM is the corpus rows per rls_scan tile.
	ScanBM = 128
	// MergeThreads is rls_merge's block size.
	MergeThreads = 512
	// FilterThreads is rls_filter's block size.
	FilterThreads = 256
)

// ScanConfig is one instantiation of scan.cu's rls_scan template: a tile of
// ScanBM corpus rows × BN queries, dim in chunks of BK values through a
// Stages-deep cp.async pipeline, WM × WN warps. Int8: the corpus is int8
// codes (rls_scan*_i8), else fp16.
type ScanConfig struct {
	Name      string
	BN, BK    int // queries per tile, dim chunk (32 or 64)
	WM, WN    int // warps along rows and along queries
	Stages    int // shared-memory pipeline depth
	MinBlocks int // __launch_bounds__ minimum blocks per SM
	Int8      bool
}

// ScanConfigs are the kernels scan.cu instantiates (its typedefs Scan16,
// Scan64, Scan128 and their I8 twins; TestScanConfigsMatchSource checks
// both agree). The tiles: rls_scan16 is the GEMV-style pass for batches ≤
// 16 (every row tile read once, the tensor cores do 16 dot products per
// row for free); rls_scan64 and rls_scan128 serve larger batches, one work
// item per (row tile, block of BN queries). Indices 0–2 are the fp16
// kernels, 3–5 the int8 ones in the same order (ScanFor).
var ScanConfigs = [6]ScanConfig{
	{Name: "rls_scan16", BN: 16, BK: 64, WM: 4, WN: 1, Stages: 4, MinBlocks: 3},
	{Name: "rls_scan64", BN: 64, BK: 32, WM: 2, WN: 2, Stages: 4, MinBlocks: 2},
	{Name: "rls_scan128", BN: 128, BK: 32, WM: 2, WN: 4, Stages: 4, MinBlocks: 1},
	{Name: "rls_scan16_i8", BN: 16, BK: 64, WM: 4, WN: 1, Stages: 4, MinBlocks: 3, Int8: true},
	{Name: "rls_scan64_i8", BN: 64, BK: 64, WM: 2, WN: 2, Stages: 4, MinBlocks: 2, Int8: true},
	{Name: "rls_scan128_i8", BN: 128, BK: 64, WM: 2, WN: 4, Stages: 4, MinBlocks: 1, Int8: true},
}

// scanInt8Base is the index in ScanConfigs of the first int8 kernel.
const scanInt8Base = 3

// Threads is the block size.
func (c ScanConfig) Threads() int { return c.WM * c.WN * 32 }

// SharedBytes is the dynamic shared memory per block: Stages stages of
// ScanBM corpus rows × BK values (2 bytes each, 1 for Int8) and BN fp16
// query rows × BK.
func (c ScanConfig) SharedBytes() int {
	es := 2
	if c.Int8 {
		es = 1
	}
	return c.Stages * (ScanBM*es + c.BN*2) * c.BK
}

// ScanFor is the index in ScanConfigs of the kernel for a batch of nq
// queries over an fp16 corpus (int8 false) or an int8 one: the smallest
// BN ≥ nq, else the largest (BN 128; nq > 128 runs as ⌈nq/128⌉ query
// blocks per row tile).
func ScanFor(nq int, int8 bool) int {
	base := 0
	if int8 {
		base = scanInt8Base
	}
	for i := base; i < base+scanInt8Base; i++ {
		if nq <= ScanConfigs[i].BN {
			return i
		}
	}
	return base + scanInt8Base - 1
}

// QueryRows is the fp16 query rows rls_scan reads for nq queries with
// ScanConfigs[cfg]: nq rounded up to a whole number of BN-query blocks.
// Rows past nq may hold anything; their scores are never kept.
func QueryRows(cfg, nq int) int {
	bn := ScanConfigs[cfg].BN
	return (nq + bn - 1) / bn * bn
}

// I8Perm is the order of the int8 kernels' k within each 16-value group
// (scan.cu, "int8 corpus"): position k of a packed query holds value
// 16b + I8Perm[k] of the group.
var I8Perm = [16]int{0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15}

// PackI8Queries makes the int8 kernels' queries for an int8 corpus whose
// rows decode as x[j] = offset[j] + scale[j]·code[j] (ann's int8 shard):
// dst [QueryRows(cfg, nq), dim] fp16 bits gets q∘scale rounded to fp16,
// each 16-value group in I8Perm order (rows past nq zero), and qoff [nq]
// gets Σ_j q[j]·offset[j] (accumulated in float64). So the kernel's score
// QOff + Σ dst·code is ⟨q, x⟩ up to the fp16 rounding of q∘scale. q is
// row-major [nq, dim] float32, dim % 16 == 0.
func PackI8Queries(dst []uint16, qoff []float32, q []float32, nq, dim int, scale, offset []float32) error {
	switch {
	case dim < 16 || dim%16 != 0:
		return fmt.Errorf("kernels: int8 query dim %d must be a positive multiple of 16", dim)
	case len(q) < nq*dim || len(qoff) < nq || len(dst) < nq*dim || len(scale) != dim || len(offset) != dim:
		return fmt.Errorf("kernels: PackI8Queries: q %d, qoff %d, dst %d values for %d × %d; scale %d, offset %d", len(q), len(qoff), len(dst), nq, dim, len(scale), len(offset))
	}
	tmp := make([]float32, dim)
	h := make([]uint16, dim)
	for qi := 0; qi < nq; qi++ {
		row := q[qi*dim : (qi+1)*dim]
		var off float64
		for j, v := range row {
			tmp[j] = v * scale[j]
			off += float64(v) * float64(offset[j])
		}
		qoff[qi] = float32(off)
		F32ToF16Ref(h, tmp)
		out := dst[qi*dim : (qi+1)*dim]
		for b := 0; b < dim; b += 16 {
			for k, p := range I8Perm {
				out[b+k] = h[b+p]
			}
		}
	}
	clear(dst[nq*dim:])
	return nil
}

// Pair is one survivor or best-list entry as the kernels store it (CUDA
// uint2): Key (rls_key of the score, 0 never ranks) and Row (-1 = empty).
type Pair struct {
	Key uint32
	Row int32
}

// PairBytes is the size of a Pair on the device.
const PairBytes = 8

// DecodePairs fills dst with the device pairs in b (little-endian uint2,
// as CopyDtoH returns them): min(len(dst), len(b)/PairBytes) of them.
func DecodePairs(dst []Pair, b []byte) {
	for i := range min(len(dst), len(b)/PairBytes) {
		dst[i] = Pair{Key: binary.LittleEndian.Uint32(b[PairBytes*i:]), Row: int32(binary.LittleEndian.Uint32(b[PairBytes*i+4:]))}
	}
}

// DecodeInt32s fills dst with the little-endian int32 values in b
// (survivor counts, flags, rows): min(len(dst), len(b)/4) of them.
func DecodeInt32s(dst []int32, b []byte) {
	for i := range min(len(dst), len(b)/4) {
		dst[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// ScanArgs are rls_scan's arguments (scan.cu): rows [RowLo, RowHi) of the
// fp16 corpus [rows, Dim] (Dim % 8 == 0) against the fp16 queries Q
// [QueryRows(cfg, NQ), Dim]; Theta [NQ] uint32; Cand [NQ, Cap] pairs;
// Count [NQ] int32. For the int8 kernels the corpus is int8 codes (Dim %
// 16 == 0), Q and QOff [NQ] fp32 are PackI8Queries' output, and a score is
// QOff[q] + Σ Q·code.
type ScanArgs struct {
	Corpus       cuda.DevPtr
	Dim          int
	RowLo, RowHi int
	Q            cuda.DevPtr
	QOff         cuda.DevPtr // int8 kernels only
	NQ           int
	Theta        cuda.DevPtr
	Cand         cuda.DevPtr
	Count        cuda.DevPtr
	Cap          int
}

func (a ScanArgs) validate(cfg ScanConfig, grid int) error {
	switch {
	case a.Dim < 8 || a.Dim%8 != 0:
		return fmt.Errorf("kernels: scan dim %d must be a positive multiple of 8", a.Dim)
	case cfg.Int8 && a.Dim%16 != 0:
		return fmt.Errorf("kernels: int8 scan dim %d must be a multiple of 16", a.Dim)
	case cfg.Int8 && a.QOff == 0:
		return fmt.Errorf("kernels: int8 scan needs the query offsets (ScanArgs.QOff)")
	case a.RowLo < 0 || a.RowHi < a.RowLo:
		return fmt.Errorf("kernels: scan rows [%d, %d)", a.RowLo, a.RowHi)
	case a.NQ < 1 || a.Cap < 1:
		return fmt.Errorf("kernels: scan nq=%d cap=%d must be positive", a.NQ, a.Cap)
	}
	tiles := int64(a.RowHi-a.RowLo+ScanBM-1) / ScanBM
	work := tiles * int64((a.NQ+cfg.BN-1)/cfg.BN)
	steps := (work/int64(max(grid, 1)) + 1) * int64((a.Dim+cfg.BK-1)/cfg.BK)
	if work > math.MaxInt32 || steps > math.MaxInt32 {
		return fmt.Errorf("kernels: scan of %d rows × %d queries is too large for one launch (%d work items)", a.RowHi-a.RowLo, a.NQ, work)
	}
	return nil
}

// scanArgs is rls_scan's parameter list (checked against the PTX by
// TestLaunchArgsMatchPTX); the int8 kernels take QOff after Q.
func scanArgs(a ScanArgs, int8 bool) []any {
	if int8 {
		return []any{a.Corpus, int32(a.Dim), int32(a.RowLo), int32(a.RowHi), a.Q, a.QOff, int32(a.NQ), a.Theta, a.Cand, a.Count, int32(a.Cap)}
	}
	return []any{a.Corpus, int32(a.Dim), int32(a.RowLo), int32(a.RowHi), a.Q, int32(a.NQ), a.Theta, a.Cand, a.Count, int32(a.Cap)}
}

// ScanLaunch is the rls_scan launch (ScanConfigs[cfg]) over a on a
// persistent grid of grid blocks (Module.ScanGrid on a GPU). An empty row
// range gives a zero Launch and no error.
func ScanLaunch(cfg int, a ScanArgs, grid int) (Launch, error) {
	if cfg < 0 || cfg >= len(ScanConfigs) || grid < 1 {
		return Launch{}, fmt.Errorf("kernels: scan config %d, grid %d", cfg, grid)
	}
	sc := ScanConfigs[cfg]
	if err := a.validate(sc, grid); err != nil {
		return Launch{}, err
	}
	if a.RowHi == a.RowLo {
		return Launch{}, nil
	}
	return Launch{Kernel: sc.Name, Grid: cuda.Dim3{X: uint32(grid), Y: 1, Z: 1}, Block: cuda.Dim3{X: uint32(sc.Threads()), Y: 1, Z: 1},
		Shared: sc.SharedBytes(), Args: scanArgs(a, sc.Int8)}, nil
}

// ScanGrid is the persistent grid rls_scan uses for ScanConfigs[cfg] and
// a span of work items: min(work, blocks per SM × SMs).
func (m *Module) ScanGrid(cfg int, a ScanArgs) int {
	bn := ScanConfigs[cfg].BN
	work := (a.RowHi - a.RowLo + ScanBM - 1) / ScanBM * ((a.NQ + bn - 1) / bn)
	return max(1, min(work, m.scanGrid[cfg]))
}

// Scan enqueues rls_scan (ScanConfigs[cfg]) over a on stream s. An empty
// row range enqueues nothing.
func (m *Module) Scan(c *cuda.Ctx, s *cuda.Stream, cfg int, a ScanArgs) error {
	if cfg < 0 || cfg >= len(ScanConfigs) {
		return fmt.Errorf("kernels: scan config %d", cfg)
	}
	l, err := ScanLaunch(cfg, a, m.ScanGrid(cfg, a))
	if err != nil || l.Kernel == "" {
		return err
	}
	return c.Launch(m.scan[cfg], l.Grid, l.Block, l.Shared, s, l.Args...)
}

// ScanState is the per-query state of the threshold pipeline on the
// device: Best [NQ, K] pairs (sorted; row -1 empty), Theta [NQ], Count
// [NQ], Flags [NQ] (bit 0: survivors were dropped), Cand [NQ, Cap].
type ScanState struct {
	Best, Theta, Count, Flags, Cand cuda.DevPtr
	NQ, K, Cap                      int
}

func scanInitArgs(st ScanState) []any {
	return []any{st.Best, int32(st.K), st.Theta, st.Count, st.Flags, int32(st.NQ)}
}

// ScanInit enqueues rls_scan_init: empty best lists, thresholds and
// counts 0, flags cleared.
func (m *Module) ScanInit(c *cuda.Ctx, s *cuda.Stream, st ScanState) error {
	l, err := ScanInitLaunch(st)
	if err != nil {
		return err
	}
	return c.Launch(m.scanInit, l.Grid, l.Block, l.Shared, s, l.Args...)
}

// ScanInitLaunch is the rls_scan_init launch for st.
func ScanInitLaunch(st ScanState) (Launch, error) {
	if st.NQ < 1 || st.K < 1 || st.K > KMax {
		return Launch{}, fmt.Errorf("kernels: scan init nq=%d k=%d", st.NQ, st.K)
	}
	blocks := min((st.NQ*st.K+255)/256, 1024)
	return Launch{Kernel: "rls_scan_init", Grid: cuda.Dim3{X: uint32(blocks), Y: 1, Z: 1}, Block: cuda.Dim3{X: 256, Y: 1, Z: 1},
		Args: scanInitArgs(st)}, nil
}

func mergeArgs(st ScanState) []any {
	return []any{st.Best, int32(st.K), st.Cand, st.Count, int32(st.Cap), st.Theta, st.Flags}
}

// Merge enqueues rls_merge: per query, best ∪ survivors → best, new
// threshold, count 0, overflow flag.
func (m *Module) Merge(c *cuda.Ctx, s *cuda.Stream, st ScanState) error {
	l, err := MergeLaunch(st)
	if err != nil {
		return err
	}
	return c.Launch(m.merge, l.Grid, l.Block, l.Shared, s, l.Args...)
}

// MergeLaunch is the rls_merge launch for st.
func MergeLaunch(st ScanState) (Launch, error) {
	if st.NQ < 1 || st.NQ > 1<<31-1 || st.K < 1 || st.K > KMax || st.Cap < 1 {
		return Launch{}, fmt.Errorf("kernels: merge nq=%d k=%d cap=%d", st.NQ, st.K, st.Cap)
	}
	return Launch{Kernel: "rls_merge", Grid: cuda.Dim3{X: uint32(st.NQ), Y: 1, Z: 1}, Block: cuda.Dim3{X: MergeThreads, Y: 1, Z: 1},
		Args: mergeArgs(st)}, nil
}

// FilterArgs are rls_filter's arguments: query qi's scores of one tile at
// Scores[qi·LdS + i], i < Rows, for rows RowBase + i; the state's Theta,
// Cand, Count and Cap.
type FilterArgs struct {
	Scores  cuda.DevPtr
	LdS     int64
	Rows    int
	RowBase int
	NQ      int
}

func filterArgs(a FilterArgs, st ScanState) []any {
	return []any{a.Scores, a.LdS, int32(a.Rows), int32(a.RowBase), st.Theta, st.Cand, st.Count, int32(st.Cap)}
}

// FilterBlocks is rls_filter's grid width for a tile of rows: one block
// per 8,192 scores (32 rounds of 256 threads), at most 1,024.
func FilterBlocks(rows int) int { return max(1, min(1024, (rows+8191)/8192)) }

// Filter enqueues rls_filter over one score tile.
func (m *Module) Filter(c *cuda.Ctx, s *cuda.Stream, a FilterArgs, st ScanState) error {
	l, err := FilterLaunch(a, st)
	if err != nil {
		return err
	}
	return c.Launch(m.filter, l.Grid, l.Block, l.Shared, s, l.Args...)
}

// FilterLaunch is the rls_filter launch over one score tile.
func FilterLaunch(a FilterArgs, st ScanState) (Launch, error) {
	if a.Rows < 1 || a.NQ < 1 || a.NQ > 65535 || (a.NQ > 1 && int64(a.Rows) > a.LdS) {
		return Launch{}, fmt.Errorf("kernels: filter rows=%d nq=%d ldS=%d", a.Rows, a.NQ, a.LdS)
	}
	return Launch{Kernel: "rls_filter", Grid: cuda.Dim3{X: uint32(FilterBlocks(a.Rows)), Y: uint32(a.NQ), Z: 1},
		Block: cuda.Dim3{X: FilterThreads, Y: 1, Z: 1}, Args: filterArgs(a, st)}, nil
}
