// Package ortenv owns the process-wide ONNX Runtime environment shared by
// every package that runs ONNX models (embed, rerank), and small helpers for
// sessions and pinned input tensors.
//
// ONNX Runtime keeps one OrtEnv per process, so it is loaded once, from one
// library, and never destroyed. Two bindings with the same API:
//
//   - with cgo, github.com/yalue/onnxruntime_go dlopens the library at run
//     time (ort_cgo.go);
//   - without cgo (CGO_ENABLED=0, the static binaries bench/gpu/build.sh
//     makes for GPU machines), ORT's C API is bound through
//     github.com/ebitengine/purego (ort_purego.go), as package cuda binds
//     the CUDA driver. Such a binary needs no C toolchain and no particular
//     glibc of its own (bench/gpu/README.md gives the numbers).
//
// ONNX Runtime's CUDA execution provider (SessionConfig.CUDA) needs the GPU
// build of ORT (make gpu-setup: .cache/ort-gpu) and the CUDA 13 libraries;
// CheckCUDA names what is missing before ORT is asked (cuda.go).
package ortenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

// env is the process-wide environment: the library the first Init named and
// the error loading it gave.
var env struct {
	once sync.Once
	lib  string
	err  error
}

// initEnv is both bindings' Init: load(lib) on the first call, remembering
// its error (the hint names how ONNX Runtime is found, plus the binding's
// own note); then the first call's error, or ErrLibMismatch when lib is
// another library than the first call's.
func initEnv(lib string, load func(lib string) error, bindingNote string) error {
	env.once.Do(func() {
		env.lib = lib
		if err := load(lib); err != nil {
			env.err = fmt.Errorf("load ONNX Runtime from %q (set Config.ORTLib or $%s to the path of libonnxruntime.so.1; scripts/setup.sh installs ONNX Runtime 1.30.0 in .cache/ort%s): %w",
				lib, EnvLib, bindingNote, err)
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
	// CUDA appends ORT's CUDA execution provider for GPU Device. NewSession
	// first runs CheckCUDA: every failure (no GPU build of ORT, a CUDA 13
	// library missing, no GPU) is an error wrapping ErrNoCUDAProvider that
	// names what is missing; nothing falls back to the CPU.
	CUDA   bool
	Device int
}

// Unusable says why ONNX Runtime cannot run dir/file on the CPU (the model
// canary's ONNX Runtime reference, embed and rerank): the file's Stat error,
// or Init(lib)'s error. It returns nil when the file exists and the
// library loads.
func Unusable(dir, file, lib string) error {
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		return err
	}
	return Init(lib)
}
