// Package kernelemu runs the kernels of kernels/nn.cu and kernels/scan.cu, and cuBLAS-style
// GEMMs on the CPU, for tests on machines without a GPU. Test-only.
//
// Open compiles kernels/emu/emu.cpp (which includes nn.cu itself, with
// RLS_EMU defined) with g++ into a shared library once per process and
// binds it with purego, so no cgo is involved. Each CUDA thread of a block
// is a fiber on one OS thread; barriers, warp shuffles and mma.sync are
// collective operations of the scheduler, which reports a divergent
// barrier as an error. Device memory is host memory with guard bytes: a
// write outside an allocation fails the launch, a read there sees NaN
// bytes. See kernels/emu/README.md for what the emulator does and does not
// check.
//
// An Emu is safe for concurrent use (calls are serialized).
package kernelemu

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
)

// EnvRequire makes a missing g++ fail instead of skip (as
// RLSEARCH_REQUIRE_NATIVE does for the other native test parts).
const EnvRequire = "RLSEARCH_REQUIRE_NATIVE"

// EnvSkip=1 skips every emulated test (the device check sets it: there the
// same tests run on the GPU, and device time is scarce).
const EnvSkip = "RLSEARCH_SKIP_EMU"

// Emu is the loaded emulator.
type Emu struct {
	mu                               sync.Mutex
	launch, alloc, free, copy_, gemm uintptr
	order, asyncLate                 uint64
	live                             map[cuda.DevPtr]int64
}

var (
	buildOnce sync.Once
	buildLib  string
	buildErr  error
	loaded    *Emu
)

// srcDir is kernels/emu, found from this file's location.
func srcDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("kernelemu: cannot locate the source tree")
	}
	return filepath.Join(filepath.Dir(file), "..", "emu"), nil
}

// Open returns the process's emulator, building it on first use (a few
// seconds). Without g++ it skips tb, or fails it when
// RLSEARCH_REQUIRE_NATIVE=1; with RLSEARCH_SKIP_EMU=1 it skips tb.
func Open(tb testing.TB) *Emu {
	tb.Helper()
	if os.Getenv(EnvSkip) == "1" {
		tb.Skipf("kernel emulator skipped (%s=1)", EnvSkip)
	}
	e, err := load()
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) && os.Getenv(EnvRequire) != "1" {
			tb.Skipf("kernel emulator: %v (install g++)", err)
		}
		tb.Fatalf("kernel emulator: %v", err)
	}
	return e
}

func load() (*Emu, error) {
	buildOnce.Do(func() {
		gxx, err := exec.LookPath("g++")
		if err != nil {
			buildErr = fmt.Errorf("g++: %w", err)
			return
		}
		dir, err := srcDir()
		if err != nil {
			buildErr = err
			return
		}
		out, err := os.MkdirTemp("", "rlsearch-kernelemu-")
		if err != nil {
			buildErr = err
			return
		}
		lib := filepath.Join(out, "libnnemu.so")
		cmd := exec.Command(gxx, "-std=c++17", "-O2", "-fno-strict-aliasing", "-shared", "-fPIC",
			"-I", dir, "-o", lib, filepath.Join(dir, "emu.cpp"))
		if msg, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("compile %s: %v\n%s", filepath.Join(dir, "emu.cpp"), err, msg)
			return
		}
		h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			buildErr = fmt.Errorf("load %s: %w", lib, err)
			return
		}
		os.RemoveAll(out) // the mapping stays valid
		e := &Emu{live: map[cuda.DevPtr]int64{}}
		for _, s := range []struct {
			p    *uintptr
			name string
		}{{&e.launch, "emu_launch"}, {&e.alloc, "emu_alloc"}, {&e.free, "emu_free"}, {&e.copy_, "emu_copy"}, {&e.gemm, "emu_gemm"}} {
			if *s.p, err = purego.Dlsym(h, s.name); err != nil {
				buildErr = fmt.Errorf("%s lacks %s: %w", lib, s.name, err)
				return
			}
		}
		loaded = e
		buildLib = lib
	})
	return loaded, buildErr
}

//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// SetReverse makes later launches run each block's threads in decreasing
// index order (true) or increasing (false, the default). Running a test in
// both orders exposes a missing __syncthreads.
func (e *Emu) SetReverse(rev bool) { e.setOrder(1, rev) }

// SetWarpMajor makes later launches run one warp of a block at a time
// (true): each warp runs, its shuffles and mma.sync released as soon as
// its own lanes reach them, until it waits at __syncthreads or returns,
// then the next warp (in decreasing order with SetReverse(true)). The
// default (false) runs every thread one step in turn, which keeps warps in
// step; this way one warp runs ahead of the others as far as the barriers
// allow, which exposes a missing barrier between warps that exchange data
// through shared memory.
func (e *Emu) SetWarpMajor(on bool) { e.setOrder(2, on) }

// setOrder sets or clears one bit of the launch order (1: reverse, 2:
// warp-major).
func (e *Emu) setOrder(bit uint64, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.order &^= bit
	if on {
		e.order |= bit
	}
}

// SetAsyncLate makes cp.async copies of later launches land at the
// cp.async.wait_group that must see them (true) or at the copy (false, the
// default). A kernel that reads a stage before its wait fails the first
// way; one that refills a stage other threads still read fails the second.
func (e *Emu) SetAsyncLate(late bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asyncLate = 0
	if late {
		e.asyncLate = 1
	}
}

// Alloc returns n bytes of emulated device memory (contents 0xff), freed
// by Free.
func (e *Emu) Alloc(n int64) (cuda.DevPtr, error) {
	if n <= 0 {
		return 0, fmt.Errorf("kernelemu: alloc of %d bytes", n)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p := cuda.DevPtr(call(e.alloc, uintptr(n)))
	if p == 0 {
		return 0, fmt.Errorf("kernelemu: out of memory allocating %d bytes", n)
	}
	e.live[p] = n
	return p, nil
}

// Free releases an allocation.
func (e *Emu) Free(p cuda.DevPtr) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.live[p]; ok {
		call(e.free, uintptr(p))
		delete(e.live, p)
	}
}

func (e *Emu) check(p cuda.DevPtr, n int64) error {
	for base, size := range e.live {
		if p >= base && int64(p-base)+n <= size {
			return nil
		}
	}
	return fmt.Errorf("kernelemu: copy of %d bytes at %#x is outside every allocation", n, uint64(p))
}

// CopyHtoD copies src to device address dst.
func (e *Emu) CopyHtoD(dst cuda.DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(dst, int64(len(src))); err != nil {
		return err
	}
	call(e.copy_, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
	return nil
}

// CopyDtoH copies len(dst) bytes from device address src.
func (e *Emu) CopyDtoH(dst []byte, src cuda.DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.check(src, int64(len(dst))); err != nil {
		return err
	}
	call(e.copy_, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
	return nil
}

// launchDesc mirrors emu.cpp's LaunchDesc.
type launchDesc struct {
	name        uint64
	grid, block [3]uint64
	args, nargs uint64
	order       uint64
	err, errlen uint64
	shared      uint64
	asyncLate   uint64
}

// Launch runs l to completion. Errors: an argument of a type the GPU
// launch would refuse, an unknown kernel, a divergent barrier, a write
// outside an allocation, a shared-memory access outside l.Shared bytes
// (or misaligned), a warp vote or shuffle with a partial mask.
func (e *Emu) Launch(l kernels.Launch) error {
	vals, err := cuda.ArgWords(l.Args)
	if err != nil {
		return fmt.Errorf("kernelemu: kernel %s %v", l.Kernel, err)
	}
	name := append([]byte(l.Kernel), 0)
	msg := make([]byte, 512)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&name[0])
	pin.Pin(&vals[0])
	pin.Pin(&msg[0])
	e.mu.Lock()
	defer e.mu.Unlock()
	d := &launchDesc{
		name:  uint64(uintptr(unsafe.Pointer(&name[0]))),
		grid:  [3]uint64{uint64(l.Grid.X), uint64(l.Grid.Y), uint64(l.Grid.Z)},
		block: [3]uint64{uint64(l.Block.X), uint64(l.Block.Y), uint64(l.Block.Z)},
		args:  uint64(uintptr(unsafe.Pointer(&vals[0]))), nargs: uint64(len(l.Args)),
		order: e.order,
		err:   uint64(uintptr(unsafe.Pointer(&msg[0]))), errlen: uint64(len(msg)),
		shared: uint64(l.Shared), asyncLate: e.asyncLate,
	}
	pin.Pin(d)
	if rc := call(e.launch, uintptr(unsafe.Pointer(d))); rc != 0 {
		n := 0
		for n < len(msg) && msg[n] != 0 {
			n++
		}
		return fmt.Errorf("kernelemu: %s", msg[:n])
	}
	return nil
}

// gemmDesc mirrors emu.cpp's GemmDesc.
type gemmDesc struct {
	transA, transB, m, n, k        uint64
	alpha, a, lda, b, ldb, beta, c uint64
	ldc, cHalf                     uint64
}

// Gemm computes g as cublasGemmEx would (column-major, fp16 A and B, fp32
// accumulation, fp16 or fp32 C). Errors name the cuBLAS status.
func (e *Emu) Gemm(g cuda.GemmArgs) error {
	if err := g.Validate(); err != nil {
		return err
	}
	b2u := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	d := &gemmDesc{transA: b2u(g.TransA), transB: b2u(g.TransB), m: uint64(g.M), n: uint64(g.N), k: uint64(g.K),
		alpha: uint64(math.Float32bits(g.Alpha)), a: uint64(g.A), lda: uint64(g.Lda), b: uint64(g.B), ldb: uint64(g.Ldb),
		beta: uint64(math.Float32bits(g.Beta)), c: uint64(g.C), ldc: uint64(g.Ldc), cHalf: b2u(g.CHalf)}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(d)
	e.mu.Lock()
	defer e.mu.Unlock()
	if rc := call(e.gemm, uintptr(unsafe.Pointer(d))); rc != 0 {
		return &cuda.Error{Lib: "cublas", Op: "emulated cublasGemmEx", Code: int(int32(rc))}
	}
	return nil
}
