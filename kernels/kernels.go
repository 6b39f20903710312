package kernels

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/rlsearch/rlsearch/cuda"
)

// Limits of rls_topk (topk.cu: RLS_KMAX, RLS_THREADS).
const (
	// KMax is the largest k one rls_topk block selects (its shared
	// candidate arrays hold 2,048 keys and rows: 16 KiB).
	KMax = 2048
	// Threads is the block size rls_topk is compiled and launched for.
	Threads = 1024
)

// The images embedded in the binary; regenerate with `make kernels`.
var (
	//go:embed topk_sm80.ptx
	ptxSM80 []byte
	//go:embed topk_sm90.ptx
	ptxSM90 []byte
	//go:embed topk_sm90.cubin
	cubinSM90 []byte
	//go:embed scan_sm80.ptx
	scanPTXSM80 []byte
	//go:embed scan_sm90.ptx
	scanPTXSM90 []byte
	//go:embed scan_sm90.cubin
	scanCubinSM90 []byte
)

// ErrUnsupportedDevice is returned by Load for GPUs older than compute
// capability 8.0 (Ampere), which our PTX does not target.
var ErrUnsupportedDevice = errors.New("kernels: GPU compute capability below 8.0")

// Module is the loaded kernel images (topk.cu and scan.cu) on one device.
// Use it only inside Device.Do of that device; it is released with the
// device or by Close.
type Module struct {
	m, sm      *cuda.Module
	topk, f2h  *cuda.Function
	Image      string // which image was loaded: "sm_90 cubin", "sm_90 ptx" or "sm_80 ptx"
	deviceInfo cuda.DeviceInfo

	scan             [len(ScanConfigs)]*cuda.Function
	scanGrid         [len(ScanConfigs)]int // persistent grid: blocks per SM × SMs
	scanInit, filter *cuda.Function
	merge            *cuda.Function
}

// Load picks the image for c's device (the sm_90 cubin on compute
// capability 9.0, else PTX for sm_90 on ≥ 9.0 or sm_80 on ≥ 8.0, compiled by
// the driver's JIT) and loads it.
func Load(c *cuda.Ctx) (*Module, error) {
	info := c.Device().Info()
	cc := info.Major*10 + info.Minor
	type cand struct {
		name      string
		img, scan []byte
	}
	var cands []cand
	switch {
	case cc == 90:
		cands = []cand{{"sm_90 cubin", cubinSM90, scanCubinSM90}, {"sm_90 ptx", ptxSM90, scanPTXSM90}}
	case cc > 90:
		cands = []cand{{"sm_90 ptx", ptxSM90, scanPTXSM90}}
	case cc >= 80:
		cands = []cand{{"sm_80 ptx", ptxSM80, scanPTXSM80}}
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
		sm, err := c.LoadModule(cd.scan)
		if err != nil {
			m.Close()
			errs = append(errs, fmt.Errorf("%s scan: %w", cd.name, err))
			continue
		}
		mod := &Module{m: m, sm: sm, Image: cd.name, deviceInfo: info}
		if err := mod.bind(c); err != nil {
			mod.Close()
			return nil, err
		}
		return mod, nil
	}
	return nil, fmt.Errorf("kernels: load: %w", errors.Join(errs...))
}

// bind looks up every kernel, raises the scan kernels' dynamic shared
// memory limit and sizes their persistent grids from the occupancy the
// driver reports.
func (mod *Module) bind(c *cuda.Ctx) error {
	var err error
	fn := func(m *cuda.Module, name string) *cuda.Function {
		if err != nil {
			return nil
		}
		var f *cuda.Function
		f, err = c.Function(m, name)
		return f
	}
	mod.topk = fn(mod.m, "rls_topk")
	mod.f2h = fn(mod.m, "rls_f32_to_f16")
	mod.scanInit = fn(mod.sm, "rls_scan_init")
	mod.filter = fn(mod.sm, "rls_filter")
	mod.merge = fn(mod.sm, "rls_merge")
	for i, sc := range ScanConfigs {
		mod.scan[i] = fn(mod.sm, sc.Name)
	}
	if err != nil {
		return err
	}
	for i, sc := range ScanConfigs {
		if err := c.SetMaxDynamicShared(mod.scan[i], sc.SharedBytes()); err != nil {
			return fmt.Errorf("kernels: %s needs %d bytes of shared memory: %w", sc.Name, sc.SharedBytes(), err)
		}
		per, err := c.Occupancy(mod.scan[i], sc.Threads(), sc.SharedBytes())
		if err != nil {
			return err
		}
		if per < 1 {
			return fmt.Errorf("kernels: %s (%d threads, %d bytes of shared memory) does not fit one SM of %s", sc.Name, sc.Threads(), sc.SharedBytes(), mod.deviceInfo.Name)
		}
		mod.scanGrid[i] = per * max(1, mod.deviceInfo.SMs)
	}
	return nil
}

// Close unloads the modules.
func (m *Module) Close() error { m.sm.Close(); return m.m.Close() }

// F32ToF16 enqueues dst[i] = fp16(src[i]) for i < n on stream s (src is
// device fp32, dst device fp16).
func (m *Module) F32ToF16(c *cuda.Ctx, s *cuda.Stream, src, dst cuda.DevPtr, n int) error {
	if n <= 0 {
		return nil
	}
	blocks := min((n+255)/256, 65535)
	return c.Launch(m.f2h, cuda.Dim3{X: uint32(blocks), Y: 1, Z: 1}, cuda.Dim3{X: 256, Y: 1, Z: 1}, 0, s,
		f2hArgs(src, dst, n)...)
}

// f2hArgs is rls_f32_to_f16's parameter list (checked against the PTX by
// TestLaunchArgsMatchPTX).
func f2hArgs(src, dst cuda.DevPtr, n int) []any { return []any{src, dst, int64(n)} }

// topkArgs is rls_topk's parameter list (checked against the PTX by
// TestLaunchArgsMatchPTX).
func topkArgs(a TopKArgs) []any {
	return []any{a.Scores, a.Rows, a.LdS, int32(a.Len), int32(a.SegLen), int32(a.RowBase), int32(a.K), a.OutS, a.OutR, a.LdOut}
}

// TopKArgs are rls_topk's arguments; see topk.cu and TopKRef. Pointers are
// device addresses; Rows == 0 means implicit rows RowBase + index.
type TopKArgs struct {
	Scores  cuda.DevPtr // fp32 [NQ, LdS]
	Rows    cuda.DevPtr // int32 [NQ, LdS] or 0
	LdS     int64       // elements between the lists of consecutive queries
	Len     int         // list length per query
	SegLen  int         // entries per segment (one block each)
	RowBase int         // row id of index 0 when Rows == 0
	K       int         // 1..KMax
	NQ      int         // queries (grid y)
	OutS    cuda.DevPtr // fp32, [NQ, LdOut]; segment s writes [s·K, s·K+K)
	OutR    cuda.DevPtr // int32, same layout
	LdOut   int64
}

// Segments is the number of segments (blocks per query) for a.
func (a TopKArgs) Segments() int { return (a.Len + a.SegLen - 1) / a.SegLen }

func (a TopKArgs) validate() error {
	switch {
	case a.K < 1 || a.K > KMax:
		return fmt.Errorf("kernels: topk k=%d outside [1, %d]", a.K, KMax)
	case a.Len < 1 || a.SegLen < 1 || a.NQ < 1:
		return fmt.Errorf("kernels: topk len=%d segLen=%d nq=%d must be positive", a.Len, a.SegLen, a.NQ)
	case int64(a.Len) > a.LdS && a.NQ > 1:
		return fmt.Errorf("kernels: topk len=%d exceeds ldS=%d", a.Len, a.LdS)
	case int64(a.Segments())*int64(a.K) > a.LdOut && a.NQ > 1:
		return fmt.Errorf("kernels: topk output %d×%d exceeds ldOut=%d", a.Segments(), a.K, a.LdOut)
	case a.Segments() > 1<<31-1 || a.NQ > 65535:
		return fmt.Errorf("kernels: topk grid %d×%d too large", a.Segments(), a.NQ)
	}
	return nil
}

// TopK enqueues rls_topk on stream s: grid (Segments, NQ), Threads threads.
func (m *Module) TopK(c *cuda.Ctx, s *cuda.Stream, a TopKArgs) error {
	if err := a.validate(); err != nil {
		return err
	}
	return c.Launch(m.topk, cuda.Dim3{X: uint32(a.Segments()), Y: uint32(a.NQ), Z: 1}, cuda.Dim3{X: Threads, Y: 1, Z: 1}, 0, s,
		topkArgs(a)...)
}
