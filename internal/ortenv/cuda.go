package ortenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// ErrNoCUDAProvider is wrapped by every error that keeps ONNX Runtime's
// CUDA execution provider from running: an ORT library without it, a
// missing CUDA 13 library, no GPU, or ORT refusing to add it.
var ErrNoCUDAProvider = errors.New("ortenv: ONNX Runtime's CUDA execution provider is unavailable")

// EnvCUDALibPath is a colon-separated list of folders searched for the CUDA
// 13 libraries (CUDALibs) before the dynamic loader's own path, for
// installs off LD_LIBRARY_PATH such as PyTorch's pip wheels
// (site-packages/nvidia/cuda_runtime/lib, nvidia/cublas/lib,
// nvidia/curand/lib). A library found there is loaded by its full path
// with RTLD_GLOBAL, so that the provider's NEEDED entry (matched by soname)
// resolves to it.
const EnvCUDALibPath = "RLSEARCH_CUDA_LIB_PATH"

// Provider library files that must sit beside the GPU build's
// libonnxruntime.so.1 (make gpu-setup puts all three in .cache/ort-gpu).
const (
	ProviderCUDALib   = "libonnxruntime_providers_cuda.so"
	ProviderSharedLib = "libonnxruntime_providers_shared.so"
)

// CUDALib is one library libonnxruntime_providers_cuda.so needs (readelf -d
// of the ORT 1.29.0 GPU build: NEEDED libcublasLt.so.13, libcublas.so.13,
// libcurand.so.10, libcudart.so.13, libcuda.so.1).
type CUDALib struct {
	Soname string
	What   string // what it is
	Wheel  string // the PyTorch pip wheel folder that carries it (site-packages/...)
}

// CUDALibs in load order (cuBLASLt before cuBLAS, which needs it).
var CUDALibs = []CUDALib{
	{"libcudart.so.13", "the CUDA 13 runtime", "nvidia/cuda_runtime/lib (pip nvidia-cuda-runtime)"},
	{"libcublasLt.so.13", "cuBLASLt of CUDA 13", "nvidia/cublas/lib (pip nvidia-cublas)"},
	{"libcublas.so.13", "cuBLAS of CUDA 13", "nvidia/cublas/lib (pip nvidia-cublas)"},
	{"libcurand.so.10", "cuRAND of CUDA 13", "nvidia/curand/lib (pip nvidia-curand)"},
}

// The CUDA provider options set (OrtCUDAProviderOptionsV2 keys).
var cudaOptionKeys = []string{"device_id"}

func cudaOptionValues(device int) []string { return []string{strconv.Itoa(device)} }

var cudaChecks sync.Map // "lib\x00device" -> error (nil stored as errOK)

var errOK = errors.New("ok")

// CheckCUDA reports what keeps ONNX Runtime's CUDA execution provider from
// running GPU device with the ORT library lib (a path, or a soname for the
// dynamic loader), without asking ORT: the provider libraries beside lib,
// then each CUDA 13 library (searched in $RLSEARCH_CUDA_LIB_PATH, then on
// the loader path, and loaded), then the driver and the device. The first
// missing piece comes back as an error wrapping ErrNoCUDAProvider that says
// where to get it. The result is remembered per (lib, device). Safe for
// concurrent use.
func CheckCUDA(lib string, device int) error {
	key := lib + "\x00" + strconv.Itoa(device)
	if v, ok := cudaChecks.Load(key); ok {
		if v.(error) == errOK {
			return nil
		}
		return v.(error)
	}
	err := checkCUDA(lib, device)
	if err == nil {
		cudaChecks.Store(key, errOK)
	} else {
		cudaChecks.Store(key, err)
	}
	return err
}

func checkCUDA(lib string, device int) error {
	if strings.Contains(lib, "/") {
		dir := filepath.Dir(lib)
		for _, f := range []string{ProviderCUDALib, ProviderSharedLib} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				return fmt.Errorf("%w: %s is not beside %s, so that library cannot run the CUDA execution provider (ONNX Runtime's CPU builds, such as the one scripts/setup.sh installs in .cache/ort, have none): run `make gpu-setup` and set Config.ORTLib / --ort-lib / $%s to .cache/ort-gpu/libonnxruntime.so.1 (ONNX Runtime 1.29.0 GPU build)",
					ErrNoCUDAProvider, f, lib, EnvLib)
			}
		}
	}
	dirs := filepath.SplitList(os.Getenv(EnvCUDALibPath))
	for _, l := range CUDALibs {
		if err := loadCUDALib(l.Soname, dirs); err != nil {
			return fmt.Errorf("%w: %s (%s, needed by %s) cannot be loaded; searched $%s=%q, then the loader path (LD_LIBRARY_PATH=%q, the ld.so cache). It comes with the CUDA 13 toolkit, or with PyTorch's pip wheels in site-packages/%s (python3 -c 'import torch; print(torch.version.cuda)' should say 13.x): add that folder to $%s or LD_LIBRARY_PATH (the loader said: %v)",
				ErrNoCUDAProvider, l.Soname, l.What, ProviderCUDALib, EnvCUDALibPath, os.Getenv(EnvCUDALibPath), os.Getenv("LD_LIBRARY_PATH"), l.Wheel, EnvCUDALibPath, err)
		}
	}
	n, err := driverDevices()
	if err != nil {
		return fmt.Errorf("%w: no usable GPU for it (the NVIDIA driver's libcuda.so.1 and a device are needed): %v", ErrNoCUDAProvider, err)
	}
	if device < 0 || device >= n {
		return fmt.Errorf("%w: GPU %d asked for, the driver sees %d", ErrNoCUDAProvider, device, n)
	}
	return nil
}

// driverDevices asks the NVIDIA driver (libcuda.so.1: cuInit, then
// cuDeviceGetCount) how many GPUs it sees. ortenv sits below the cuda
// package (the floors of the package documentation), so it asks the driver
// itself rather than through cuda.Devices.
func driverDevices() (int, error) {
	h, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, fmt.Errorf("libcuda.so.1: %v", err)
	}
	var cuInit func(flags uint32) int32
	var cuDeviceGetCount func(count *int32) int32
	for name, fn := range map[string]any{"cuInit": &cuInit, "cuDeviceGetCount": &cuDeviceGetCount} {
		sym, err := purego.Dlsym(h, name)
		if err != nil {
			return 0, fmt.Errorf("libcuda.so.1 has no %s: %v", name, err)
		}
		purego.RegisterFunc(fn, sym)
	}
	if rc := cuInit(0); rc != 0 {
		return 0, fmt.Errorf("cuInit: CUresult %d", rc)
	}
	var c int32
	if rc := cuDeviceGetCount(&c); rc != 0 {
		return 0, fmt.Errorf("cuDeviceGetCount: CUresult %d", rc)
	}
	return int(c), nil
}

// loadCUDALib dlopens soname from the first of dirs that has it (by full
// path), else by soname on the loader path; RTLD_GLOBAL, so that later
// NEEDED entries of that soname resolve to it.
func loadCUDALib(soname string, dirs []string) error {
	for _, d := range dirs {
		p := filepath.Join(d, soname)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		return nil
	}
	_, err := purego.Dlopen(soname, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	return err
}

// cudaAppendError wraps ORT's refusal to add the CUDA provider.
func cudaAppendError(device int, err error) error {
	return fmt.Errorf("%w: ONNX Runtime %s could not add the CUDA execution provider for GPU %d: %v", ErrNoCUDAProvider, Version(), device, err)
}
