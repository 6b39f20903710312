package cuda

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

var (
	// ErrNoDevice means there is no usable CUDA driver or device: the
	// driver library is missing, cuInit failed with "no device" or
	// "insufficient driver", or the device ordinal does not exist. Callers
	// fall back to the CPU.
	ErrNoDevice = errors.New("cuda: no CUDA driver or device")
	// ErrNoCUBLAS means no cuBLAS library could be loaded.
	ErrNoCUBLAS = errors.New("cuda: cuBLAS library not found")
	// ErrClosed is returned by operations on a closed Device or object.
	ErrClosed = errors.New("cuda: closed")
	// ErrBadArg is returned for invalid arguments (negative sizes, out of
	// range copies, unsupported kernel argument types).
	ErrBadArg = errors.New("cuda: bad argument")
)

// Error is a failed driver or cuBLAS call.
type Error struct {
	Lib  string // "cuda" (driver API) or "cublas"
	Op   string // the C function, e.g. "cuMemAlloc_v2"
	Code int    // CUresult or cublasStatus_t
	Name string // the code's name when the library knows it (cuGetErrorName)
}

func (e *Error) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("cuda: %s: %s (%d)", e.Op, e.Name, e.Code)
	}
	return fmt.Sprintf("cuda: %s: %s error %d", e.Op, e.Lib, e.Code)
}

// Driver API result codes used here (cuda.h, CUresult).
const (
	cuSuccess            = 0
	cuErrNotInitialized  = 3
	cuErrNoDevice        = 100
	cuErrInvalidDevice   = 101
	cuErrInsufficientDrv = 35
	cuErrSystemDrvMism   = 803
	cuErrCompatNotSupp   = 804
)

// Is makes driver codes that mean "no usable GPU" match ErrNoDevice.
func (e *Error) Is(target error) bool {
	if target != ErrNoDevice || e.Lib != "cuda" {
		return false
	}
	switch e.Code {
	case cuErrNoDevice, cuErrInvalidDevice, cuErrInsufficientDrv, cuErrSystemDrvMism, cuErrCompatNotSupp:
		return true
	}
	return false
}

// EnvCUDALib and EnvCUBLASLib override the library paths (for tests and
// unusual installs); empty means the sonames below.
const (
	EnvCUDALib   = "RLSEARCH_CUDA_LIB"
	EnvCUBLASLib = "RLSEARCH_CUBLAS_LIB"
)

// cublasSonames are tried in order: CUDA 13, 12, 11 (the device machines
// have CUDA 13; Debian 12's toolkit ships 11).
var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

// driver holds the resolved symbols of libcuda.so.1.
type driver struct {
	init, deviceGetCount, deviceGet, deviceGetName, deviceTotalMem, deviceGetAttribute uintptr
	primaryCtxRetain, primaryCtxRelease, ctxSetCurrent, ctxSynchronize                 uintptr
	streamCreate, streamDestroy, streamSynchronize                                     uintptr
	memAlloc, memFree, memAllocHost, memFreeHost, memGetInfo                           uintptr
	memcpyHtoD, memcpyDtoH, memcpyHtoDAsync, memcpyDtoHAsync, memcpyDtoDAsync          uintptr
	memsetD32Async                                                                     uintptr
	moduleLoadData, moduleGetFunction, moduleUnload, launchKernel                      uintptr
	getErrorName                                                                       uintptr
	driverGetVersion                                                                   uintptr
	funcSetAttribute, occupancyMaxBlocks                                               uintptr
	eventCreate, eventDestroy, eventRecord, eventSynchronize, eventElapsed             uintptr
	streamWaitEvent                                                                    uintptr
}

type blasLib struct {
	path                                       string
	create, destroy, setStream, gemmEx, getVer uintptr
}

var (
	drvOnce sync.Once
	drv     *driver
	drvErr  error

	blasOnce sync.Once
	blas     *blasLib
	blasErr  error
)

// loadDriver dlopens the driver and calls cuInit(0) once per process.
func loadDriver() (*driver, error) {
	drvOnce.Do(func() {
		path := os.Getenv(EnvCUDALib)
		if path == "" {
			path = "libcuda.so.1"
		}
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			drvErr = fmt.Errorf("%w: load %s: %v", ErrNoDevice, path, err)
			return
		}
		d := &driver{}
		syms := []struct {
			p    *uintptr
			name string
		}{
			{&d.init, "cuInit"}, {&d.deviceGetCount, "cuDeviceGetCount"}, {&d.deviceGet, "cuDeviceGet"},
			{&d.deviceGetName, "cuDeviceGetName"}, {&d.deviceTotalMem, "cuDeviceTotalMem_v2"},
			{&d.deviceGetAttribute, "cuDeviceGetAttribute"}, {&d.primaryCtxRetain, "cuDevicePrimaryCtxRetain"},
			{&d.primaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"}, {&d.ctxSetCurrent, "cuCtxSetCurrent"},
			{&d.ctxSynchronize, "cuCtxSynchronize"}, {&d.streamCreate, "cuStreamCreate"},
			{&d.streamDestroy, "cuStreamDestroy_v2"}, {&d.streamSynchronize, "cuStreamSynchronize"},
			{&d.memAlloc, "cuMemAlloc_v2"}, {&d.memFree, "cuMemFree_v2"}, {&d.memAllocHost, "cuMemAllocHost_v2"},
			{&d.memFreeHost, "cuMemFreeHost"}, {&d.memGetInfo, "cuMemGetInfo_v2"},
			{&d.memcpyHtoD, "cuMemcpyHtoD_v2"}, {&d.memcpyDtoH, "cuMemcpyDtoH_v2"},
			{&d.memcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"}, {&d.memcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
			{&d.memcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"}, {&d.memsetD32Async, "cuMemsetD32Async"},
			{&d.moduleLoadData, "cuModuleLoadData"}, {&d.moduleGetFunction, "cuModuleGetFunction"},
			{&d.moduleUnload, "cuModuleUnload"}, {&d.launchKernel, "cuLaunchKernel"},
			{&d.getErrorName, "cuGetErrorName"}, {&d.driverGetVersion, "cuDriverGetVersion"},
		}
		// Bound when present; a call of a missing one returns an *Error
		// (Code -1) instead of making the whole driver unusable.
		optional := []struct {
			p     *uintptr
			names []string
		}{
			{&d.funcSetAttribute, []string{"cuFuncSetAttribute"}},
			{&d.occupancyMaxBlocks, []string{"cuOccupancyMaxActiveBlocksPerMultiprocessor"}},
			{&d.eventCreate, []string{"cuEventCreate"}}, {&d.eventDestroy, []string{"cuEventDestroy_v2", "cuEventDestroy"}},
			{&d.eventRecord, []string{"cuEventRecord"}}, {&d.eventSynchronize, []string{"cuEventSynchronize"}},
			{&d.eventElapsed, []string{"cuEventElapsedTime", "cuEventElapsedTime_v2"}},
			{&d.streamWaitEvent, []string{"cuStreamWaitEvent"}},
		}
		for _, s := range optional {
			for _, name := range s.names {
				if p, err := purego.Dlsym(h, name); err == nil {
					*s.p = p
					break
				}
			}
		}
		for _, s := range syms {
			p, err := purego.Dlsym(h, s.name)
			if err != nil {
				drvErr = fmt.Errorf("%w: %s lacks %s: %v", ErrNoDevice, path, s.name, err)
				return
			}
			*s.p = p
		}
		if err := d.check("cuInit", call(d.init, 0)); err != nil {
			drvErr = err
			if !errors.Is(err, ErrNoDevice) {
				drvErr = fmt.Errorf("%w: %v", ErrNoDevice, err)
			}
			return
		}
		drv = d
	})
	return drv, drvErr
}

// loadBLAS dlopens cuBLAS once per process.
func loadBLAS() (*blasLib, error) {
	blasOnce.Do(func() {
		names := cublasSonames
		if p := os.Getenv(EnvCUBLASLib); p != "" {
			names = []string{p}
		}
		var errs []error
		for _, name := range names {
			h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			b := &blasLib{path: name}
			ok := true
			for _, s := range []struct {
				p    *uintptr
				name string
			}{{&b.create, "cublasCreate_v2"}, {&b.destroy, "cublasDestroy_v2"}, {&b.setStream, "cublasSetStream_v2"},
				{&b.gemmEx, "cublasGemmEx"}, {&b.getVer, "cublasGetVersion_v2"}} {
				p, err := purego.Dlsym(h, s.name)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s lacks %s", name, s.name))
					ok = false
					break
				}
				*s.p = p
			}
			if ok {
				blas = b
				return
			}
		}
		blasErr = fmt.Errorf("%w: tried %v: %v", ErrNoCUBLAS, names, errors.Join(errs...))
	})
	return blas, blasErr
}

// call invokes a C function whose arguments are all integers or pointers
// and which returns a 32-bit status. Like purego.SyscallN it is marked
// uintptrescapes: a uintptr(unsafe.Pointer(&x)) written in the argument list
// keeps x on the heap and alive for the call.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) int {
	r, _, _ := purego.SyscallN(fn, args...)
	return int(int32(r))
}

// callOpt is call for a symbol bound only when present (see loadDriver).
// Like call it is uintptrescapes: pointers converted in its argument list
// stay valid for the call.
//
//go:uintptrescapes
func (d *driver) callOpt(op string, fn uintptr, args ...uintptr) error {
	if fn == 0 {
		return &Error{Lib: "cuda", Op: op, Code: -1, Name: "not in this libcuda"}
	}
	return d.check(op, call(fn, args...))
}

// check turns a CUresult into nil or *Error.
func (d *driver) check(op string, code int) error {
	if code == cuSuccess {
		return nil
	}
	e := &Error{Lib: "cuda", Op: op, Code: code}
	if d != nil && d.getErrorName != 0 {
		var p uintptr
		if call(d.getErrorName, uintptr(code), uintptr(unsafe.Pointer(&p))) == cuSuccess && p != 0 {
			e.Name = goString(p)
		}
	}
	return e
}

func blasCheck(op string, code int) error {
	if code == 0 {
		return nil
	}
	return &Error{Lib: "cublas", Op: op, Code: code, Name: cublasStatusName(code)}
}

func cublasStatusName(code int) string {
	switch code {
	case 1:
		return "CUBLAS_STATUS_NOT_INITIALIZED"
	case 3:
		return "CUBLAS_STATUS_ALLOC_FAILED"
	case 7:
		return "CUBLAS_STATUS_INVALID_VALUE"
	case 8:
		return "CUBLAS_STATUS_ARCH_MISMATCH"
	case 11:
		return "CUBLAS_STATUS_MAPPING_ERROR"
	case 13:
		return "CUBLAS_STATUS_EXECUTION_FAILED"
	case 14:
		return "CUBLAS_STATUS_INTERNAL_ERROR"
	case 15:
		return "CUBLAS_STATUS_NOT_SUPPORTED"
	}
	return ""
}

// DriverVersion returns the driver's CUDA version as 1000*major + 10*minor
// (cuDriverGetVersion), or an error matching ErrNoDevice.
func DriverVersion() (int, error) {
	d, err := loadDriver()
	if err != nil {
		return 0, err
	}
	var v int32
	if err := d.check("cuDriverGetVersion", call(d.driverGetVersion, uintptr(unsafe.Pointer(&v)))); err != nil {
		return 0, err
	}
	return int(v), nil
}

// CUBLASLibrary returns the soname or path of the cuBLAS library that was
// loaded, loading it if needed.
func CUBLASLibrary() (string, error) {
	b, err := loadBLAS()
	if err != nil {
		return "", err
	}
	return b.path, nil
}

// cptr turns an address returned by C (outside the Go heap) into a pointer
// without a uintptr→unsafe.Pointer conversion that vet flags.
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// goString copies the NUL-terminated C string at p.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(cptr(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
