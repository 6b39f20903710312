// Package ortenv owns the process-wide ONNX Runtime environment shared by
// every package that runs ONNX models (embed, rerank), and small helpers for
// sessions and pinned input tensors.
//
// ONNX Runtime keeps one OrtEnv per process (onnxruntime_go holds it in a
// package variable), so it is loaded once, from one library, and never
// destroyed. Build: with cgo, github.com/yalue/onnxruntime_go dlopens the
// library at run time (ort_cgo.go). Without cgo (CGO_ENABLED=0, the static
// binaries bench/gpu/build.sh makes for GPU machines) the same API exists
// (ort_nocgo.go) but Init and NewSession fail with ErrNoCgo, so that the
// packages built on it (embed, rerank) still build and serve their GPU
// providers, which need no ONNX Runtime.
package ortenv

import (
	"errors"
	"os"
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

// ErrNoCgo is returned by Init and NewSession in a binary built without
// cgo (CGO_ENABLED=0): ONNX Runtime cannot be loaded there.
var ErrNoCgo = errors.New("ortenv: this binary was built without cgo (CGO_ENABLED=0), so it cannot load ONNX Runtime: use a cgo build for the cpu and cuda providers; the gpu providers run without ONNX Runtime")

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
	// CUDA appends ORT's CUDA execution provider for GPU Device (an error
	// when the library lacks it).
	CUDA   bool
	Device int
}
