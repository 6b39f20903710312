package cuda

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// Device attributes (cuda.h, CUdevice_attribute).
const (
	attrMultiprocessorCount = 16
	attrL2CacheSize         = 38
	attrComputeMajor        = 75
	attrComputeMinor        = 76
	attrMaxSharedOptin      = 97
)

// DeviceInfo describes one GPU.
type DeviceInfo struct {
	Ordinal      int
	Name         string
	TotalMem     int64 // bytes
	Major, Minor int   // compute capability
	SMs          int   // multiprocessors
	L2Bytes      int   // L2 cache size (bytes)
	// SharedOptin is the most shared memory one block can use after
	// Function.SetMaxDynamicShared raises its limit (bytes).
	SharedOptin int
}

// Devices lists the GPUs the driver sees. Errors match ErrNoDevice when
// there is no driver or no device. Safe for concurrent use.
func Devices() ([]DeviceInfo, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	var n int32
	if err := d.check("cuDeviceGetCount", call(d.deviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: driver reports 0 devices", ErrNoDevice)
	}
	out := make([]DeviceInfo, 0, n)
	for i := 0; i < int(n); i++ {
		info, err := deviceInfo(d, i)
		if err != nil {
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

func deviceInfo(d *driver, ordinal int) (DeviceInfo, error) {
	var dev int32
	if err := d.check("cuDeviceGet", call(d.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(ordinal))); err != nil {
		return DeviceInfo{}, err
	}
	info := DeviceInfo{Ordinal: ordinal}
	name := make([]byte, 256)
	if err := d.check("cuDeviceGetName", call(d.deviceGetName, uintptr(unsafe.Pointer(&name[0])), 256, uintptr(dev))); err != nil {
		return info, err
	}
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	info.Name = string(name)
	var mem uint64
	if err := d.check("cuDeviceTotalMem_v2", call(d.deviceTotalMem, uintptr(unsafe.Pointer(&mem)), uintptr(dev))); err != nil {
		return info, err
	}
	info.TotalMem = int64(mem)
	for _, a := range []struct {
		dst  *int
		attr int
	}{{&info.Major, attrComputeMajor}, {&info.Minor, attrComputeMinor}, {&info.SMs, attrMultiprocessorCount},
		{&info.L2Bytes, attrL2CacheSize}, {&info.SharedOptin, attrMaxSharedOptin}} {
		var v int32
		if err := d.check("cuDeviceGetAttribute", call(d.deviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a.attr), uintptr(dev))); err != nil {
			return info, err
		}
		*a.dst = int(v)
	}
	return info, nil
}

// Device is one GPU driven by its owner goroutine. Safe for concurrent use:
// Do serialises work onto the owner.
type Device struct {
	info  DeviceInfo
	d     *driver
	tasks chan task
	done  chan struct{}

	closeMu sync.RWMutex // Do holds it shared while handing a task over; Close exclusively
	closed  bool

	mu      sync.Mutex   // guards pending
	pending []func(*Ctx) // releases queued by Close calls from any goroutine

	ctx *Ctx // owner-goroutine state
}

type task struct {
	fn  func(*Ctx) error
	err chan error
}

// Open starts the owner goroutine of device ordinal: it locks an OS thread,
// retains the primary context and makes it current. Errors match
// ErrNoDevice without a driver or with an ordinal out of range. The caller
// must Close the Device.
func Open(ordinal int) (*Device, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	devs, err := Devices()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= len(devs) {
		return nil, fmt.Errorf("%w: ordinal %d, driver has %d devices", ErrNoDevice, ordinal, len(devs))
	}
	dev := &Device{info: devs[ordinal], d: d, tasks: make(chan task), done: make(chan struct{})}
	ready := make(chan error)
	go dev.owner(ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return dev, nil
}

// Info describes the device.
func (dev *Device) Info() DeviceInfo { return dev.info }

func (dev *Device) owner(ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(dev.done)
	d := dev.d
	var cudev int32
	if err := d.check("cuDeviceGet", call(d.deviceGet, uintptr(unsafe.Pointer(&cudev)), uintptr(dev.info.Ordinal))); err != nil {
		ready <- err
		return
	}
	var ctx uintptr
	if err := d.check("cuDevicePrimaryCtxRetain", call(d.primaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(cudev))); err != nil {
		ready <- err
		return
	}
	defer call(d.primaryCtxRelease, uintptr(cudev))
	if err := d.check("cuCtxSetCurrent", call(d.ctxSetCurrent, ctx)); err != nil {
		ready <- err
		return
	}
	c := &Ctx{dev: dev, d: d}
	dev.ctx = c
	ready <- nil
	for t := range dev.tasks {
		dev.drain(c)
		err := t.fn(c)
		dev.drain(c)
		t.err <- err
	}
	// Closing: release everything still open, in reverse creation order.
	dev.drain(c)
	dev.mu.Lock()
	dev.pending = nil // releases queued after this point find nothing to do
	dev.mu.Unlock()
	call(d.ctxSynchronize)
	for i := len(c.live) - 1; i >= 0; i-- {
		if r := c.live[i]; r != nil {
			r.release(c)
		}
	}
	if c.blas != 0 {
		if b, err := loadBLAS(); err == nil {
			call(b.destroy, c.blas)
		}
	}
}

// drain runs releases queued by Close calls (owner goroutine only).
func (dev *Device) drain(c *Ctx) {
	dev.mu.Lock()
	p := dev.pending
	dev.pending = nil
	dev.mu.Unlock()
	for _, f := range p {
		f(c)
	}
}

// Do runs fn on the owner goroutine with the device's context current and
// waits for it. fn must not keep c after it returns and must not call Do
// on the same Device (that would deadlock). Errors: ErrClosed after Close,
// else fn's error.
func (dev *Device) Do(fn func(c *Ctx) error) error {
	dev.closeMu.RLock()
	if dev.closed {
		dev.closeMu.RUnlock()
		return ErrClosed
	}
	t := task{fn: fn, err: make(chan error, 1)}
	// Send while holding closeMu so that Close cannot close tasks under us.
	dev.tasks <- t
	dev.closeMu.RUnlock()
	return <-t.err
}

// Close waits for queued work, frees every buffer, stream and module still
// open, releases the primary context and stops the owner goroutine.
// Idempotent.
func (dev *Device) Close() error {
	dev.closeMu.Lock()
	if dev.closed {
		dev.closeMu.Unlock()
		return nil
	}
	dev.closed = true
	close(dev.tasks)
	dev.closeMu.Unlock()
	<-dev.done
	return nil
}

// enqueueRelease queues r's release to the owner (any goroutine).
func (dev *Device) enqueueRelease(r resource) {
	dev.mu.Lock()
	defer dev.mu.Unlock()
	dev.pending = append(dev.pending, func(c *Ctx) { c.forget(r); r.release(c) })
}

type resource interface{ release(c *Ctx) }

// Ctx is the device context as seen by the owner goroutine during Do. Not
// safe for concurrent use; invalid after fn returns.
type Ctx struct {
	dev  *Device
	d    *driver
	live []resource
	blas uintptr // cublasHandle_t, created lazily
}

func (c *Ctx) track(r resource) { c.live = append(c.live, r) }

func (c *Ctx) forget(r resource) {
	for i, x := range c.live {
		if x == r {
			c.live[i] = c.live[len(c.live)-1]
			c.live = c.live[:len(c.live)-1]
			return
		}
	}
}

// Device returns the owning device.
func (c *Ctx) Device() *Device { return c.dev }

// MemInfo returns free and total device memory in bytes.
func (c *Ctx) MemInfo() (free, total int64, err error) {
	var f, t uint64
	err = c.d.check("cuMemGetInfo_v2", call(c.d.memGetInfo, uintptr(unsafe.Pointer(&f)), uintptr(unsafe.Pointer(&t))))
	return int64(f), int64(t), err
}

// DevPtr is a device address. It is not a Go pointer.
type DevPtr uint64

// Buffer is device memory (cuMemAlloc). Close frees it; Close is safe from
// any goroutine and idempotent.
type Buffer struct {
	dev   *Device
	ptr   DevPtr
	bytes int64
	once  sync.Once
}

// Alloc allocates bytes of device memory (contents undefined).
func (c *Ctx) Alloc(bytes int64) (*Buffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: alloc of %d bytes", ErrBadArg, bytes)
	}
	c.dev.drain(c)
	var p uint64
	if err := c.d.check("cuMemAlloc_v2", call(c.d.memAlloc, uintptr(unsafe.Pointer(&p)), uintptr(bytes))); err != nil {
		return nil, fmt.Errorf("alloc %d bytes on GPU %d: %w", bytes, c.dev.info.Ordinal, err)
	}
	b := &Buffer{dev: c.dev, ptr: DevPtr(p), bytes: bytes}
	c.track(b)
	return b, nil
}

// Ptr is the device address of byte off.
func (b *Buffer) Ptr(off int64) DevPtr { return b.ptr + DevPtr(off) }

// Len is the size in bytes.
func (b *Buffer) Len() int64 { return b.bytes }

func (b *Buffer) release(c *Ctx) { call(c.d.memFree, uintptr(b.ptr)) }

// Close frees the memory (queued to the owner goroutine).
func (b *Buffer) Close() error {
	b.once.Do(func() { b.dev.enqueueRelease(b) })
	return nil
}

// HostBuffer is page-locked host memory (cuMemAllocHost) usable for async
// copies. Bytes is a view of it, valid until Close.
type HostBuffer struct {
	dev  *Device
	p    uintptr
	buf  []byte
	once sync.Once
}

// AllocHost allocates bytes of pinned host memory.
func (c *Ctx) AllocHost(bytes int) (*HostBuffer, error) {
	if bytes <= 0 {
		return nil, fmt.Errorf("%w: host alloc of %d bytes", ErrBadArg, bytes)
	}
	c.dev.drain(c)
	var p uintptr
	if err := c.d.check("cuMemAllocHost_v2", call(c.d.memAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(bytes))); err != nil {
		return nil, fmt.Errorf("pinned alloc %d bytes: %w", bytes, err)
	}
	h := &HostBuffer{dev: c.dev, p: p, buf: unsafe.Slice((*byte)(cptr(p)), bytes)}
	c.track(h)
	return h, nil
}

// Bytes is the pinned memory; do not use it after Close.
func (h *HostBuffer) Bytes() []byte { return h.buf }

func (h *HostBuffer) release(c *Ctx) { call(c.d.memFreeHost, h.p) }

// Close frees the memory (queued to the owner goroutine).
func (h *HostBuffer) Close() error {
	h.once.Do(func() { h.dev.enqueueRelease(h) })
	return nil
}

// Stream is a CUDA stream. Close is safe from any goroutine.
type Stream struct {
	dev  *Device
	h    uintptr
	once sync.Once
}

// NewStream creates a stream (CU_STREAM_NON_BLOCKING).
func (c *Ctx) NewStream() (*Stream, error) {
	var h uintptr
	if err := c.d.check("cuStreamCreate", call(c.d.streamCreate, uintptr(unsafe.Pointer(&h)), 1)); err != nil {
		return nil, err
	}
	s := &Stream{dev: c.dev, h: h}
	c.track(s)
	return s, nil
}

func (s *Stream) release(c *Ctx) { call(c.d.streamDestroy, s.h) }

// Close destroys the stream (queued to the owner goroutine).
func (s *Stream) Close() error {
	s.once.Do(func() { s.dev.enqueueRelease(s) })
	return nil
}

func streamHandle(s *Stream) uintptr {
	if s == nil {
		return 0
	}
	return s.h
}

// Sync waits for the stream's work.
func (c *Ctx) Sync(s *Stream) error {
	return c.d.check("cuStreamSynchronize", call(c.d.streamSynchronize, streamHandle(s)))
}

func checkRange(what string, off, n, size int64) error {
	if off < 0 || n < 0 || off+n > size {
		return fmt.Errorf("%w: %s [%d, %d) outside %d bytes", ErrBadArg, what, off, off+n, size)
	}
	return nil
}

// CopyHtoD copies src into dst at byte offset off, synchronously. src may
// be ordinary Go memory.
func (c *Ctx) CopyHtoD(dst *Buffer, off int64, src []byte) error {
	if err := checkRange("CopyHtoD destination", off, int64(len(src)), dst.bytes); err != nil || len(src) == 0 {
		return err
	}
	return c.d.check("cuMemcpyHtoD_v2", call(c.d.memcpyHtoD, uintptr(dst.ptr)+uintptr(off), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src))))
}

// CopyDtoH copies len(dst) bytes from src at byte offset off, synchronously.
func (c *Ctx) CopyDtoH(dst []byte, src *Buffer, off int64) error {
	if err := checkRange("CopyDtoH source", off, int64(len(dst)), src.bytes); err != nil || len(dst) == 0 {
		return err
	}
	return c.d.check("cuMemcpyDtoH_v2", call(c.d.memcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src.ptr)+uintptr(off), uintptr(len(dst))))
}

// CopyHtoDAsync copies n bytes from pinned src at srcOff to dst at dstOff on
// stream s. src must stay open until the stream has passed the copy.
func (c *Ctx) CopyHtoDAsync(dst *Buffer, dstOff int64, src *HostBuffer, srcOff, n int64, s *Stream) error {
	if err := checkRange("CopyHtoDAsync destination", dstOff, n, dst.bytes); err != nil {
		return err
	}
	if err := checkRange("CopyHtoDAsync source", srcOff, n, int64(len(src.buf))); err != nil || n == 0 {
		return err
	}
	return c.d.check("cuMemcpyHtoDAsync_v2", call(c.d.memcpyHtoDAsync, uintptr(dst.ptr)+uintptr(dstOff), src.p+uintptr(srcOff), uintptr(n), streamHandle(s)))
}

// CopyDtoHAsync copies n bytes from src at srcOff into pinned dst at dstOff
// on stream s.
func (c *Ctx) CopyDtoHAsync(dst *HostBuffer, dstOff int64, src *Buffer, srcOff, n int64, s *Stream) error {
	if err := checkRange("CopyDtoHAsync source", srcOff, n, src.bytes); err != nil {
		return err
	}
	if err := checkRange("CopyDtoHAsync destination", dstOff, n, int64(len(dst.buf))); err != nil || n == 0 {
		return err
	}
	return c.d.check("cuMemcpyDtoHAsync_v2", call(c.d.memcpyDtoHAsync, dst.p+uintptr(dstOff), uintptr(src.ptr)+uintptr(srcOff), uintptr(n), streamHandle(s)))
}

// Module is loaded device code. Close unloads it.
type Module struct {
	dev  *Device
	h    uintptr
	once sync.Once
}

// LoadModule loads a PTX (text) or cubin (ELF) image (cuModuleLoadData;
// PTX is compiled by the driver's JIT for this device).
func (c *Ctx) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, fmt.Errorf("%w: empty module image", ErrBadArg)
	}
	img := make([]byte, len(image)+1) // PTX must be NUL-terminated
	copy(img, image)
	var h uintptr
	if err := c.d.check("cuModuleLoadData", call(c.d.moduleLoadData, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])))); err != nil {
		return nil, err
	}
	m := &Module{dev: c.dev, h: h}
	c.track(m)
	return m, nil
}

func (m *Module) release(c *Ctx) { call(c.d.moduleUnload, m.h) }

// Close unloads the module (queued to the owner goroutine).
func (m *Module) Close() error {
	m.once.Do(func() { m.dev.enqueueRelease(m) })
	return nil
}

// Function is a kernel in a Module; valid while the module is open.
type Function struct {
	h    uintptr
	name string
}

// Function looks up an extern "C" kernel by name.
func (c *Ctx) Function(m *Module, name string) (*Function, error) {
	cname := append([]byte(name), 0)
	var h uintptr
	if err := c.d.check("cuModuleGetFunction("+name+")", call(c.d.moduleGetFunction, uintptr(unsafe.Pointer(&h)), m.h, uintptr(unsafe.Pointer(&cname[0])))); err != nil {
		return nil, err
	}
	return &Function{h: h, name: name}, nil
}

// Function attributes (cuda.h, CUfunction_attribute).
const funcAttrMaxDynamicShared = 8

// SetMaxDynamicShared allows launches of fn with up to bytes of dynamic
// shared memory (cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
// needed above 48 KiB. Errors: *Error when bytes exceeds the device's
// DeviceInfo.SharedOptin less the kernel's static shared memory.
func (c *Ctx) SetMaxDynamicShared(fn *Function, bytes int) error {
	return c.d.callOpt("cuFuncSetAttribute("+fn.name+")", c.d.funcSetAttribute, fn.h, funcAttrMaxDynamicShared, uintptr(bytes))
}

// Occupancy is how many blocks of fn with threads threads and sharedBytes of
// dynamic shared memory fit on one multiprocessor at once
// (cuOccupancyMaxActiveBlocksPerMultiprocessor); persistent kernels size
// their grid as Occupancy × DeviceInfo.SMs.
func (c *Ctx) Occupancy(fn *Function, threads, sharedBytes int) (int, error) {
	var n int32
	err := c.d.callOpt("cuOccupancyMaxActiveBlocksPerMultiprocessor("+fn.name+")",
		c.d.occupancyMaxBlocks, uintptr(unsafe.Pointer(&n)), fn.h, uintptr(threads), uintptr(sharedBytes))
	return int(n), err
}

// Event is a CUDA event, for ordering work across streams and for device
// timing. Close is safe from any goroutine and idempotent.
type Event struct {
	dev  *Device
	h    uintptr
	once sync.Once
}

// NewEvent creates an event (cuEventCreate); timing false makes it
// cheaper (CU_EVENT_DISABLE_TIMING) and unusable for Elapsed.
func (c *Ctx) NewEvent(timing bool) (*Event, error) {
	flags := uintptr(2) // CU_EVENT_DISABLE_TIMING
	if timing {
		flags = 0
	}
	var h uintptr
	if err := c.d.callOpt("cuEventCreate", c.d.eventCreate, uintptr(unsafe.Pointer(&h)), flags); err != nil {
		return nil, err
	}
	e := &Event{dev: c.dev, h: h}
	c.track(e)
	return e, nil
}

func (e *Event) release(c *Ctx) { c.d.callOpt("cuEventDestroy", c.d.eventDestroy, e.h) }

// Close destroys the event (queued to the owner goroutine).
func (e *Event) Close() error {
	e.once.Do(func() { e.dev.enqueueRelease(e) })
	return nil
}

// Record captures the work enqueued on s so far into e (cuEventRecord).
func (c *Ctx) Record(e *Event, s *Stream) error {
	return c.d.callOpt("cuEventRecord", c.d.eventRecord, e.h, streamHandle(s))
}

// WaitEvent makes later work on s wait for the work e last captured
// (cuStreamWaitEvent), without blocking the host.
func (c *Ctx) WaitEvent(s *Stream, e *Event) error {
	return c.d.callOpt("cuStreamWaitEvent", c.d.streamWaitEvent, streamHandle(s), e.h, 0)
}

// EventSync blocks until the work e captured has run (cuEventSynchronize).
func (c *Ctx) EventSync(e *Event) error {
	return c.d.callOpt("cuEventSynchronize", c.d.eventSynchronize, e.h)
}

// Elapsed is the device time between two recorded timing events, in ms
// (cuEventElapsedTime; resolution about 0.5 µs).
func (c *Ctx) Elapsed(start, end *Event) (float32, error) {
	var ms float32
	err := c.d.callOpt("cuEventElapsedTime", c.d.eventElapsed, uintptr(unsafe.Pointer(&ms)), start.h, end.h)
	return ms, err
}

// MemsetD32Async sets n 32-bit words of dst from byte offset off (a
// multiple of 4) to v on stream s (cuMemsetD32Async).
func (c *Ctx) MemsetD32Async(dst *Buffer, off int64, v uint32, n int64, s *Stream) error {
	if off%4 != 0 {
		return fmt.Errorf("%w: memset offset %d is not a multiple of 4", ErrBadArg, off)
	}
	if err := checkRange("MemsetD32Async", off, 4*n, dst.bytes); err != nil || n == 0 {
		return err
	}
	return c.d.check("cuMemsetD32Async", call(c.d.memsetD32Async, uintptr(dst.ptr)+uintptr(off), uintptr(v), uintptr(n), streamHandle(s)))
}

// CopyDtoDAsync copies n bytes within device memory on stream s
// (cuMemcpyDtoDAsync).
func (c *Ctx) CopyDtoDAsync(dst *Buffer, dstOff int64, src *Buffer, srcOff, n int64, s *Stream) error {
	if err := checkRange("CopyDtoDAsync destination", dstOff, n, dst.bytes); err != nil {
		return err
	}
	if err := checkRange("CopyDtoDAsync source", srcOff, n, src.bytes); err != nil || n == 0 {
		return err
	}
	return c.d.check("cuMemcpyDtoDAsync_v2", call(c.d.memcpyDtoDAsync, uintptr(dst.ptr)+uintptr(dstOff), uintptr(src.ptr)+uintptr(srcOff), uintptr(n), streamHandle(s)))
}

// Dim3 is a grid or block shape.
type Dim3 struct{ X, Y, Z uint32 }

// Launch enqueues fn on stream s. args are the kernel parameters in order;
// each must be DevPtr, int32, uint32, int64, uint64 or float32 (matching the
// C signature exactly). The driver copies the parameters before Launch
// returns.
func (c *Ctx) Launch(fn *Function, grid, block Dim3, sharedBytes int, s *Stream, args ...any) error {
	if grid.X == 0 || grid.Y == 0 || grid.Z == 0 || block.X == 0 || block.Y == 0 || block.Z == 0 {
		return fmt.Errorf("%w: launch %s with grid %v block %v", ErrBadArg, fn.name, grid, block)
	}
	vals, err := ArgWords(args)
	if err != nil {
		return fmt.Errorf("%w: kernel %s %v", ErrBadArg, fn.name, err)
	}
	ptrs := make([]uintptr, len(args)+1)
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&vals[0])
	for i := range args {
		ptrs[i] = uintptr(unsafe.Pointer(&vals[i]))
	}
	return c.d.check("cuLaunchKernel("+fn.name+")", call(c.d.launchKernel, fn.h,
		uintptr(grid.X), uintptr(grid.Y), uintptr(grid.Z), uintptr(block.X), uintptr(block.Y), uintptr(block.Z),
		uintptr(sharedBytes), streamHandle(s), uintptr(unsafe.Pointer(&ptrs[0])), 0))
}

// ArgWords is each kernel parameter as the 64-bit slot cuLaunchKernel
// reads it from (DevPtr, int32, uint32, int64, uint64 or float32; the
// smaller ones in the low bytes), plus one spare slot so that the slice
// is never empty. An argument of another type is an error naming its
// position.
func ArgWords(args []any) ([]uint64, error) {
	vals := make([]uint64, len(args)+1)
	for i, a := range args {
		switch v := a.(type) {
		case DevPtr:
			vals[i] = uint64(v)
		case int32:
			vals[i] = uint64(uint32(v))
		case uint32:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		default:
			return nil, fmt.Errorf("argument %d has type %T", i, a)
		}
	}
	return vals, nil
}

// cuBLAS constants (cublas_api.h, library_types.h).
const (
	cublasOpN        = 0
	cublasOpT        = 1
	cudaR16F         = 2
	cudaR32F         = 0
	cublasCompute32F = 68
	cublasGemmDflt   = -1
)

// GemmF16 computes C = alpha·op(A)·op(B) + beta·C in column-major order
// (cuBLAS convention) with A and B fp16, C fp32 and fp32 accumulation
// (cublasGemmEx, CUBLAS_COMPUTE_32F) on stream s. op(A) is m×k, op(B) is
// k×n, C is m×n with leading dimension ldc: Gemm with an fp32 C. Errors:
// ErrBadArg (GemmArgs.Validate), ErrNoCUBLAS, *Error.
func (c *Ctx) GemmF16(s *Stream, transA, transB bool, m, n, k int, alpha float32, a DevPtr, lda int, b DevPtr, ldb int, beta float32, cm DevPtr, ldc int) error {
	return c.Gemm(s, GemmArgs{TransA: transA, TransB: transB, M: m, N: n, K: k, Alpha: alpha, A: a, Lda: lda, B: b, Ldb: ldb, Beta: beta, C: cm, Ldc: ldc})
}
