package embed

import (
	"errors"
	"fmt"

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

// newSession creates one session (internal/ortenv.NewSession);
// cudaDevice ≥ 0 appends ORT's CUDA execution provider for that GPU (an
// error when the library lacks it).
func newSession(model []byte, inputs []string, output string, intraOp, cudaDevice int) (*ortenv.Session, error) {
	return ortenv.NewSession(ortenv.SessionConfig{Model: model, Inputs: inputs, Outputs: []string{output},
		IntraOp: intraOp, CUDA: cudaDevice >= 0, Device: cudaDevice})
}
