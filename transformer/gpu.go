package transformer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
)

// Executor is what a forward pass needs from a device: memory, copies,
// kernel launches and GEMMs, executed in order. On a GPU (the
// constructors' own) everything is enqueued on the legacy default stream,
// so the synchronous copies order themselves after the kernels before
// them; kernelemu.Emu implements the same methods on the CPU, which is how
// tests without a GPU run the GPU models (OpenBertGPUOn, OpenQwen3GPUOn).
type Executor interface {
	Alloc(int64) (cuda.DevPtr, error)
	Free(cuda.DevPtr)
	CopyHtoD(cuda.DevPtr, []byte) error
	CopyDtoH([]byte, cuda.DevPtr) error
	Launch(kernels.Launch) error
	Gemm(cuda.GemmArgs) error
}

// backend runs functions with an Executor, one at a time (a GPU's owner
// goroutine, or a lock for the emulator).
type backend interface {
	run(fn func(x Executor) error) error
	name() string
	release()
}

// gpuModel is what BertGPU and Qwen3GPU share: the device, the weights'
// memory, the forward workspace and the closed flag.
type gpuModel struct {
	gc GPUConfig
	be backend

	mu     sync.Mutex // guards ws and closed; one forward at a time
	ws     workspace
	mem    devMem
	closed bool
}

// upload runs fill on the device's owner with an uploader into m's weight
// memory; on the first error, nothing more is uploaded and the memory
// uploaded so far is freed.
func (m *gpuModel) upload(fill func(u *uploader)) error {
	return m.be.run(func(x Executor) error {
		u := &uploader{x: x, mem: &m.mem}
		fill(u)
		if u.err != nil {
			m.mem.free(x)
		}
		return u.err
	})
}

// uploader copies weights to the device, keeping the first error.
type uploader struct {
	x   Executor
	mem *devMem
	err error
}

// f16 uploads ts, concatenated, as fp16 into *dst.
func (u *uploader) f16(dst *cuda.DevPtr, ts ...*Tensor) {
	if u.err == nil {
		*dst, u.err = u.mem.upF16(u.x, ts...)
	}
}

// f32 uploads vs, concatenated, as fp32 into *dst.
func (u *uploader) f32(dst *cuda.DevPtr, vs ...[]float32) {
	if u.err == nil {
		*dst, u.err = u.mem.upF32(u.x, vs...)
	}
}

// forEachChunk runs fn on the device's owner for each packed pass of ids
// (batchChunks of MaxBatchTokens), one forward at a time; ErrClosed after
// close.
func (m *gpuModel) forEachChunk(ids [][]int32, fn func(x Executor, idx []int) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	for _, idx := range batchChunks(ids, m.gc.MaxBatchTokens) {
		if err := m.be.run(func(x Executor) error { return fn(x, idx) }); err != nil {
			return err
		}
	}
	return nil
}

// close frees the model's GPU memory (weights and workspace) and releases
// the GPU; later calls do nothing.
func (m *gpuModel) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.closed = true
	m.be.run(func(x Executor) error {
		m.ws.free(x)
		m.mem.free(x)
		return nil
	})
	m.be.release()
}

// execBackend serialises calls to an Executor (the CPU emulator in tests).
type execBackend struct {
	mu sync.Mutex
	x  Executor
}

func (b *execBackend) run(fn func(x Executor) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return fn(b.x)
}
func (b *execBackend) name() string { return "executor (CPU emulator of kernels/nn.cu)" }
func (b *execBackend) release()     {}

// cudaBackend is one GPU, shared in the process (cuda.Acquire).
type cudaBackend struct {
	dev   *cuda.Device
	rel   func()
	nn    *kernels.NN // loaded on the owner goroutine by the first run
	bufs  map[cuda.DevPtr]*cuda.Buffer
	bases []cuda.DevPtr // sorted keys of bufs
}

func (b *cudaBackend) name() string {
	i := b.dev.Info()
	return fmt.Sprintf("gpu:%d (%s, compute capability %d.%d)", i.Ordinal, i.Name, i.Major, i.Minor)
}

func (b *cudaBackend) release() {
	b.dev.Do(func(c *cuda.Ctx) error {
		for _, buf := range b.bufs {
			buf.Close()
		}
		if b.nn != nil {
			b.nn.Close()
		}
		return nil
	})
	b.rel()
}

func (b *cudaBackend) run(fn func(x Executor) error) error {
	return b.dev.Do(func(c *cuda.Ctx) error {
		if b.nn == nil {
			nn, err := kernels.LoadNN(c)
			if err != nil {
				return err
			}
			b.nn = nn
		}
		return fn(&cudaExec{b: b, c: c})
	})
}

// cudaExec is a cudaBackend inside Device.Do.
type cudaExec struct {
	b *cudaBackend
	c *cuda.Ctx
}

func (x *cudaExec) Alloc(n int64) (cuda.DevPtr, error) {
	buf, err := x.c.Alloc(n)
	if err != nil {
		return 0, err
	}
	p := buf.Ptr(0)
	x.b.bufs[p] = buf
	i, _ := slices.BinarySearch(x.b.bases, p)
	x.b.bases = slices.Insert(x.b.bases, i, p)
	return p, nil
}

func (x *cudaExec) Free(p cuda.DevPtr) {
	if buf, ok := x.b.bufs[p]; ok {
		buf.Close()
		delete(x.b.bufs, p)
		i, _ := slices.BinarySearch(x.b.bases, p)
		x.b.bases = slices.Delete(x.b.bases, i, i+1)
	}
}

// find returns the buffer holding [p, p+n) and p's offset in it.
func (x *cudaExec) find(p cuda.DevPtr, n int) (*cuda.Buffer, int64, error) {
	i, found := slices.BinarySearch(x.b.bases, p)
	if !found {
		i--
	}
	if i >= 0 {
		buf := x.b.bufs[x.b.bases[i]]
		off := int64(p - x.b.bases[i])
		if off+int64(n) <= buf.Len() {
			return buf, off, nil
		}
	}
	return nil, 0, fmt.Errorf("transformer: copy of %d bytes at %#x outside the model's buffers", n, uint64(p))
}

func (x *cudaExec) CopyHtoD(p cuda.DevPtr, b []byte) error {
	buf, off, err := x.find(p, len(b))
	if err != nil {
		return err
	}
	return x.c.CopyHtoD(buf, off, b)
}

func (x *cudaExec) CopyDtoH(b []byte, p cuda.DevPtr) error {
	buf, off, err := x.find(p, len(b))
	if err != nil {
		return err
	}
	return x.c.CopyDtoH(b, buf, off)
}

func (x *cudaExec) Launch(l kernels.Launch) error { return x.b.nn.Run(x.c, nil, l) }
func (x *cudaExec) Gemm(g cuda.GemmArgs) error    { return x.c.Gemm(nil, g) }

// ErrInput marks token ids a model cannot take (out of the vocabulary,
// longer than its positions or MaxBatchTokens, empty where a token is
// needed); the message names the sequence.
var ErrInput = errors.New("transformer: bad input")

// ErrClosed is returned by calls on a closed GPU model.
var ErrClosed = errors.New("transformer: model is closed")

// ErrNoGPU is wrapped (together with cuda.ErrNoDevice when the cause is
// that no driver or device is present) by the GPU constructors and
// ProbeGPU when the GPU asked for cannot run the models.
var ErrNoGPU = errors.New("transformer: GPU unusable")

// ProbeGPU checks that GPU ordinal can run the forward passes: a driver and
// the device (errors match cuda.ErrNoDevice), compute capability 8.0 or
// newer (the tensor-core mma.sync of kernels/nn.cu's attention), cuBLAS
// (cuda.ErrNoCUBLAS). It returns the device's description. Every error
// wraps ErrNoGPU and says what is missing.
func ProbeGPU(ordinal int) (cuda.DeviceInfo, error) {
	devs, err := cuda.Devices()
	if err != nil {
		return cuda.DeviceInfo{}, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	if ordinal < 0 || ordinal >= len(devs) {
		return cuda.DeviceInfo{}, fmt.Errorf("%w: %w: GPU %d asked for, the driver sees %d", ErrNoGPU, cuda.ErrNoDevice, ordinal, len(devs))
	}
	info := devs[ordinal]
	if info.Major < 8 {
		return info, fmt.Errorf("%w: %w: %s is compute capability %d.%d", ErrNoGPU, kernels.ErrUnsupportedDevice, info.Name, info.Major, info.Minor)
	}
	if _, err := cuda.CUBLASLibrary(); err != nil {
		return info, fmt.Errorf("%w: %w (set %s to libcublas.so.13, .12 or .11)", ErrNoGPU, err, cuda.EnvCUBLASLib)
	}
	return info, nil
}

// ParseDevice parses a device request: "cpu" (or ""), "gpu" (GPU 0),
// "gpu:N", or "auto" (GPU 0 when ProbeGPU accepts it, else the CPU). It
// returns the kind ("cpu", "gpu" or "auto") and the GPU ordinal.
func ParseDevice(s string) (kind string, ordinal int, err error) {
	switch {
	case s == "" || s == "cpu":
		return "cpu", -1, nil
	case s == "gpu":
		return "gpu", 0, nil
	case s == "auto":
		return "auto", 0, nil
	case strings.HasPrefix(s, "gpu:"):
		n, err := strconv.Atoi(s[len("gpu:"):])
		if err == nil && n >= 0 {
			return "gpu", n, nil
		}
	}
	return "", 0, fmt.Errorf("transformer: device %q is not cpu, gpu, gpu:N or auto", s)
}

// openCUDA acquires GPU ordinal after ProbeGPU.
func openCUDA(ordinal int) (*cudaBackend, error) {
	if _, err := ProbeGPU(ordinal); err != nil {
		return nil, err
	}
	dev, rel, err := cuda.Acquire(ordinal)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	return &cudaBackend{dev: dev, rel: rel, bufs: map[cuda.DevPtr]*cuda.Buffer{}}, nil
}

// GPUConfig configures the GPU models. Zero fields take the defaults.
type GPUConfig struct {
	// Device is the GPU ordinal (default 0).
	Device int
	// MaxBatchTokens is the most tokens of one forward pass: longer batches
	// run as several, each sequence whole. Default 32,768; at most 65,535
	// (the grid's y limit in rls_qk_norm_rope). The work space grows with
	// it: about 2·(5·Hidden + QKV width + 3·Intermediate) bytes per token.
	MaxBatchTokens int
}

// DefaultMaxBatchTokens is GPUConfig.MaxBatchTokens left zero.
const DefaultMaxBatchTokens = 32768

func (g GPUConfig) withDefaults() (GPUConfig, error) {
	if g.MaxBatchTokens == 0 {
		g.MaxBatchTokens = DefaultMaxBatchTokens
	}
	if g.MaxBatchTokens < 1 || g.MaxBatchTokens > 65535 {
		return g, fmt.Errorf("transformer: GPUConfig.MaxBatchTokens %d outside [1, 65535]", g.MaxBatchTokens)
	}
	if g.Device < 0 {
		return g, fmt.Errorf("transformer: GPUConfig.Device %d is negative", g.Device)
	}
	return g, nil
}

// devMem tracks a model's allocations on one Executor.
type devMem struct {
	ptrs []cuda.DevPtr
}

func (m *devMem) alloc(x Executor, n int64) (cuda.DevPtr, error) {
	p, err := x.Alloc(max(n, 16))
	if err == nil {
		m.ptrs = append(m.ptrs, p)
	}
	return p, err
}

func (m *devMem) free(x Executor) {
	for _, p := range m.ptrs {
		x.Free(p)
	}
	m.ptrs = nil
}

// upF16 uploads tensors concatenated along their first axis as fp16,
// refusing values beyond fp16's range.
func (m *devMem) upF16(x Executor, ts ...*Tensor) (cuda.DevPtr, error) {
	n := 0
	for _, t := range ts {
		n += t.Len()
	}
	b := make([]byte, 2*n)
	off := 0
	for _, t := range ts {
		piece := b[2*off : 2*(off+t.Len())]
		var bad int
		if t.DType == F16 && !t.Transposed { // as stored: copy, and count the non-finite
			copy(piece, t.data)
			for i := 0; i < len(piece); i += 2 {
				if piece[i+1]&0x7c == 0x7c {
					bad++
				}
			}
		} else {
			h := make([]uint16, t.Len())
			bad = t.Float16Into(h)
			for i, v := range h {
				binary.LittleEndian.PutUint16(piece[2*i:], v)
			}
		}
		if bad > 0 {
			return 0, fmt.Errorf("%w: %s has %d values that are not finite in fp16 (|x| > 65504 or NaN)", ErrWeights, t.Name, bad)
		}
		off += t.Len()
	}
	p, err := m.alloc(x, int64(len(b)))
	if err != nil {
		return 0, err
	}
	return p, x.CopyHtoD(p, b)
}

// upF32 uploads float32 values (concatenated).
func (m *devMem) upF32(x Executor, vs ...[]float32) (cuda.DevPtr, error) {
	var all []float32
	for _, v := range vs {
		all = append(all, v...)
	}
	p, err := m.alloc(x, int64(4*len(all)))
	if err != nil {
		return 0, err
	}
	return p, x.CopyHtoD(p, f32bytes(all))
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

func bytesF32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// workspace holds a forward pass's scratch buffers, grown on demand
// (never shrunk) and reused across calls.
type workspace struct {
	bufs map[string]sized
}

type sized struct {
	p cuda.DevPtr
	n int64
}

func (w *workspace) get(x Executor, name string, n int64) (cuda.DevPtr, error) {
	if w.bufs == nil {
		w.bufs = map[string]sized{}
	}
	if s, ok := w.bufs[name]; ok && s.n >= n {
		return s.p, nil
	} else if ok {
		x.Free(s.p)
		delete(w.bufs, name)
	}
	n = max(n, 256)
	p, err := x.Alloc(n)
	if err != nil {
		return 0, fmt.Errorf("transformer: work space %s of %d bytes: %w", name, n, err)
	}
	w.bufs[name] = sized{p, n}
	return p, nil
}

func (w *workspace) free(x Executor) {
	for _, s := range w.bufs {
		x.Free(s.p)
	}
	w.bufs = nil
}

// batchChunks cuts the non-empty sequences of ids, in order, into runs of
// at most maxTokens tokens (a longer sequence alone); it returns the
// indices of each run.
func batchChunks(ids [][]int32, maxTokens int) [][]int {
	var out [][]int
	var cur []int
	tokens := 0
	for i, s := range ids {
		if len(s) == 0 {
			continue
		}
		if len(cur) > 0 && tokens+len(s) > maxTokens {
			out = append(out, cur)
			cur, tokens = nil, 0
		}
		cur = append(cur, i)
		tokens += len(s)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// packed is one forward pass's batch: token ids, positions and offsets.
type packed struct {
	ids, pos, cu, last []int32
	maxLen             int
}

func pack(ids [][]int32, idx []int) packed {
	p := packed{cu: []int32{0}}
	for _, i := range idx {
		for t, id := range ids[i] {
			p.ids = append(p.ids, id)
			p.pos = append(p.pos, int32(t))
		}
		p.cu = append(p.cu, int32(len(p.ids)))
		p.last = append(p.last, int32(len(p.ids)-1))
		p.maxLen = max(p.maxLen, len(ids[i]))
	}
	return p
}

// linearArgs is the GEMM y = x·Wᵀ for row-major x [rows, in], W [out, in]
// (fp16) into row-major y [rows, out]: fp16 y, or fp32 y accumulated onto
// (beta 1) when acc.
func linearArgs(x cuda.DevPtr, rows, in int, w cuda.DevPtr, out int, y cuda.DevPtr, acc bool) cuda.GemmArgs {
	g := cuda.GemmArgs{TransA: true, M: out, N: rows, K: in, Alpha: 1, A: w, Lda: in, B: x, Ldb: in, C: y, Ldc: out, CHalf: !acc}
	if acc {
		g.Beta = 1
	}
	return g
}

// stepper runs a sequence of launches and GEMMs, stopping at the first error.
type stepper struct {
	x   Executor
	err error
}

func (s *stepper) launch(l kernels.Launch, err error) {
	if s.err != nil {
		return
	}
	if err != nil {
		s.err = err
		return
	}
	if err := s.x.Launch(l); err != nil {
		s.err = fmt.Errorf("transformer: %s: %w", l.Kernel, err)
	}
}

func (s *stepper) gemm(g cuda.GemmArgs) {
	if s.err != nil {
		return
	}
	if err := s.x.Gemm(g); err != nil {
		s.err = fmt.Errorf("transformer: gemm %dx%dx%d: %w", g.M, g.N, g.K, err)
	}
}
