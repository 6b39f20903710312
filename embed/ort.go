package embed

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// EnvORTLib is the environment variable that names the ONNX Runtime shared
// library when Config.ORTLib is empty (scripts/setup.sh installs one at
// .cache/ort/libonnxruntime.so.1 and prints the matching export).
const EnvORTLib = "ONNXRUNTIME_LIB"

// DefaultORTLib is the library name handed to dlopen when neither
// Config.ORTLib nor $ONNXRUNTIME_LIB is set: the dynamic loader then searches
// LD_LIBRARY_PATH, the ld.so cache and the default directories.
const DefaultORTLib = "libonnxruntime.so.1"

// ErrORTLibMismatch is returned by Open when ONNX Runtime was already loaded
// in this process from a different library than the one the Config asks for.
// One process holds one ONNX Runtime environment.
var ErrORTLibMismatch = errors.New("embed: onnx runtime already loaded from another library")

// The ONNX Runtime environment is process-wide (one OrtEnv per process, which
// onnxruntime_go keeps in a package variable), so it is initialised once and
// never destroyed: sessions of every Encoder share it. ORT logs only fatal
// messages (every failure also comes back as a Go error). A failed first
// initialisation is remembered, so every later Open returns the same error
// instead of retrying dlopen.
var ortEnv struct {
	once sync.Once
	lib  string // library path the environment was loaded from
	err  error
}

// resolveORTLib returns the library path Open uses for cfg.ORTLib.
func resolveORTLib(lib string) string {
	if lib != "" {
		return lib
	}
	if env := os.Getenv(EnvORTLib); env != "" {
		return env
	}
	return DefaultORTLib
}

// initORT loads the ONNX Runtime shared library and creates the process-wide
// environment on the first call; later calls return the first call's result.
// It is safe for concurrent use.
func initORT(lib string) error {
	ortEnv.once.Do(func() {
		ortEnv.lib = lib
		if ort.IsInitialized() {
			// Another package of this process (for example a reranker) loaded
			// it first; share its environment.
			return
		}
		ort.SetSharedLibraryPath(lib)
		if err := ort.InitializeEnvironment(ort.WithLogLevelFatal()); err != nil {
			ortEnv.err = fmt.Errorf("embed: load ONNX Runtime from %q (set Config.ORTLib or $%s to the path of libonnxruntime.so.1; scripts/setup.sh installs ONNX Runtime 1.30.0 in .cache/ort): %w",
				lib, EnvORTLib, err)
		}
	})
	if ortEnv.err != nil {
		return ortEnv.err
	}
	if lib != ortEnv.lib {
		return fmt.Errorf("%w: loaded %q, asked for %q", ErrORTLibMismatch, ortEnv.lib, lib)
	}
	return nil
}

// newSession creates one ORT session over the serialized model with the
// given intra-op thread count (inter-op 1: BERT graphs are sequential).
func newSession(model []byte, inputs []string, output string, intraOp int) (*ort.DynamicAdvancedSession, error) {
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
	return ort.NewDynamicAdvancedSessionWithONNXData(model, inputs, []string{output}, opts)
}

// tensorSet holds the ORT values of one sub-batch. The Go slices behind them
// are pinned while ORT holds pointers to them (house style: memory C keeps
// after a call is C-allocated or pinned); release destroys the values and
// unpins.
type tensorSet struct {
	pin    runtime.Pinner
	values []ort.Value
}

func newTensorOf[T ort.TensorData](ts *tensorSet, shape ort.Shape, data []T) (*ort.Tensor[T], error) {
	ts.pin.Pin(&data[0])
	t, err := ort.NewTensor(shape, data)
	if err != nil {
		return nil, err
	}
	ts.values = append(ts.values, t)
	return t, nil
}

func (ts *tensorSet) release() {
	for _, v := range ts.values {
		v.Destroy()
	}
	ts.values = nil
	ts.pin.Unpin()
}
