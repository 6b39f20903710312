package embed

import (
	"errors"
	"fmt"
	"strconv"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rlsearch/rlsearch/internal/ortenv"
)

// EnvORTLib is the environment variable that names the ONNX Runtime shared
// library when Config.ORTLib is empty (scripts/setup.sh installs one at
// .cache/ort/libonnxruntime.so.1 and prints the matching export).
const EnvORTLib = ortenv.EnvLib

// DefaultORTLib is the library name handed to dlopen when neither
// Config.ORTLib nor $ONNXRUNTIME_LIB is set: the dynamic loader then searches
// LD_LIBRARY_PATH, the ld.so cache and the default directories.
const DefaultORTLib = ortenv.DefaultLib

// ErrORTLibMismatch is returned by Open when ONNX Runtime was already loaded
// in this process from a different library than the one the Config asks for.
// One process holds one ONNX Runtime environment, shared with package rerank
// through internal/ortenv.
var ErrORTLibMismatch = ortenv.ErrLibMismatch

// resolveORTLib returns the library path Open uses for cfg.ORTLib.
func resolveORTLib(lib string) string { return ortenv.Resolve(lib) }

// initORT loads ONNX Runtime once per process (internal/ortenv); later
// calls return the first call's result. Safe for concurrent use.
func initORT(lib string) error {
	if err := ortenv.Init(lib); err != nil {
		if errors.Is(err, ortenv.ErrLibMismatch) {
			return err
		}
		return fmt.Errorf("embed: %w", err)
	}
	return nil
}

// newSession creates one ORT session over the serialized model with the
// given intra-op thread count (inter-op 1: BERT graphs are sequential).
// newSession creates one session; cudaDevice ≥ 0 appends ORT's CUDA
// execution provider for that GPU (an error when the library lacks it).
func newSession(model []byte, inputs []string, output string, intraOp, cudaDevice int) (*ort.DynamicAdvancedSession, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, err
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(intraOp); err != nil {
		return nil, err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, err
	}
	if cudaDevice >= 0 {
		cu, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return nil, fmt.Errorf("CUDA provider options: %w", err)
		}
		defer cu.Destroy()
		if err := cu.Update(map[string]string{"device_id": strconv.Itoa(cudaDevice)}); err != nil {
			return nil, fmt.Errorf("CUDA provider device_id %d: %w", cudaDevice, err)
		}
		if err := opts.AppendExecutionProviderCUDA(cu); err != nil {
			return nil, fmt.Errorf("append CUDA execution provider: %w", err)
		}
	}
	return ort.NewDynamicAdvancedSessionWithONNXData(model, inputs, []string{output}, opts)
}
