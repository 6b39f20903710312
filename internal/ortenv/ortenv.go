// Package ortenv owns the process-wide ONNX Runtime environment shared by
// every package that runs ONNX models (embed, rerank), and small helpers for
// sessions and pinned input tensors.
//
// ONNX Runtime keeps one OrtEnv per process (onnxruntime_go holds it in a
// package variable), so it is loaded once, from one library, and never
// destroyed. Build: cgo (github.com/yalue/onnxruntime_go dlopens the
// library at run time).
package ortenv

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// EnvLib is the environment variable that names the ONNX Runtime shared
// library when a Config leaves it empty (scripts/setup.sh installs one at
// .cache/ort/libonnxruntime.so.1 and prints the matching export).
const EnvLib = "ONNXRUNTIME_LIB"

// DefaultLib is the library name handed to dlopen when neither the Config
// nor $ONNXRUNTIME_LIB names one: the dynamic loader then searches
// LD_LIBRARY_PATH, the ld.so cache and the default directories.
const DefaultLib = "libonnxruntime.so.1"

// ErrLibMismatch is returned by Init when ONNX Runtime was already loaded in
// this process from a different library than the one asked for.
var ErrLibMismatch = errors.New("ortenv: onnx runtime already loaded from another library")

var env struct {
	once sync.Once
	lib  string
	err  error
}

// Resolve returns the library path Init should load for a configured value
// lib: lib itself, else $ONNXRUNTIME_LIB, else DefaultLib.
func Resolve(lib string) string {
	if lib != "" {
		return lib
	}
	if e := os.Getenv(EnvLib); e != "" {
		return e
	}
	return DefaultLib
}

// Init loads the ONNX Runtime shared library lib (already resolved) and
// creates the process-wide environment on the first call, logging only
// fatal messages (every failure also comes back as a Go error). Later calls
// return the first call's error, or ErrLibMismatch (wrapped) when they name
// another library. A failed first load is remembered rather than retried.
// Safe for concurrent use.
func Init(lib string) error {
	env.once.Do(func() {
		env.lib = lib
		if ort.IsInitialized() {
			return
		}
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
			env.err = fmt.Errorf("load ONNX Runtime from %q (set Config.ORTLib or $%s to the path of libonnxruntime.so.1; scripts/setup.sh installs ONNX Runtime 1.30.0 in .cache/ort): %w",
				lib, EnvLib, err)
		}
	})
	if env.err != nil {
		return env.err
	}
	if lib != env.lib {
		return fmt.Errorf("%w: loaded %q, asked for %q", ErrLibMismatch, env.lib, lib)
	}
	return nil
}

// SessionConfig describes one ORT session.
type SessionConfig struct {
	// Path is the model file. Loading by path lets ONNX Runtime find
	// external weight files next to the model (model.onnx.data: exports
	// over 2 GB, such as Qwen3-Reranker in float32, must use them).
	Path string
	// Model is the serialized model, used instead of Path when non-nil.
	Model           []byte
	Inputs, Outputs []string
	// IntraOp is the intra-op thread count (inter-op is 1: the BERT and
	// Qwen3 graphs here are sequential).
	IntraOp int
	// CUDA appends ORT's CUDA execution provider for GPU Device (an error
	// when the library lacks it).
	CUDA   bool
	Device int
}

// NewSession creates one ORT session: the one constructor of every
// package that runs ONNX models. Init must have succeeded. The caller
// destroys the session. Safe for concurrent use.
func NewSession(cfg SessionConfig) (*ort.DynamicAdvancedSession, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(cfg.IntraOp); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	if cfg.CUDA {
		cu, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return nil, fmt.Errorf("CUDA provider options: %w", err)
		}
		defer cu.Destroy()
		if err := cu.Update(map[string]string{"device_id": strconv.Itoa(cfg.Device)}); err != nil {
			return nil, fmt.Errorf("CUDA provider device_id %d: %w", cfg.Device, err)
		}
		if err := opts.AppendExecutionProviderCUDA(cu); err != nil {
			return nil, fmt.Errorf("append CUDA execution provider: %w", err)
		}
	}
	if cfg.Model != nil {
		return ort.NewDynamicAdvancedSessionWithONNXData(cfg.Model, cfg.Inputs, cfg.Outputs, opts)
	}
	return ort.NewDynamicAdvancedSession(cfg.Path, cfg.Inputs, cfg.Outputs, opts)
}

// Tensors holds the ORT values of one run. The Go slices behind them are
// pinned while ORT holds pointers to them (memory C keeps after a call is
// pinned); Release destroys the values and unpins. Not safe for concurrent
// use; the zero value is ready.
type Tensors struct {
	pin    runtime.Pinner
	values []ort.Value
}

// NewTensor wraps data (non-empty, len = product of shape) as a tensor owned
// by ts; data must not be resized until ts.Release.
func NewTensor[T ort.TensorData](ts *Tensors, shape ort.Shape, data []T) (*ort.Tensor[T], error) {
	if len(data) == 0 {
		return nil, errors.New("ortenv: empty tensor")
	}
	ts.pin.Pin(&data[0])
	t, err := ort.NewTensor(shape, data)
	if err != nil {
		return nil, err
	}
	ts.values = append(ts.values, t)
	return t, nil
}

// Release destroys every tensor of ts and unpins their data.
func (ts *Tensors) Release() {
	for _, v := range ts.values {
		v.Destroy()
	}
	ts.values = nil
	ts.pin.Unpin()
}
