//go:build cgo

package ortenv

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// The ONNX Runtime types embed and rerank use, as onnxruntime_go defines
// them (ort_nocgo.go has stand-ins with the same methods).
type (
	// Session is an ORT session over dynamic inputs and outputs.
	Session = ort.DynamicAdvancedSession
	// Value is an ORT input or output value.
	Value = ort.Value
	// Shape is a tensor shape.
	Shape = ort.Shape
	// TensorData are the element types a Tensor may hold.
	TensorData = ort.TensorData
	// Tensor is an ORT tensor over a Go slice.
	Tensor[T TensorData] = ort.Tensor[T]
)

// NewShape is ort.NewShape.
func NewShape(dims ...int64) Shape { return ort.NewShape(dims...) }

// Init loads the ONNX Runtime shared library lib (already resolved) and
// creates the process-wide environment on the first call, logging only
// fatal messages (every failure also comes back as a Go error). Later calls
// return the first call's error, or ErrLibMismatch (wrapped) when they name
// another library. A failed first load is remembered rather than retried.
// Safe for concurrent use.
func Init(lib string) error {
	return initEnv(lib, func(lib string) error {
		if ort.IsInitialized() {
			return nil
		}
		ort.SetSharedLibraryPath(lib)
		return ort.InitializeEnvironment(ort.WithLogLevelFatal())
	}, "")
}

// NewSession creates one ORT session: the one constructor of every
// package that runs ONNX models. Init must have succeeded. The caller
// destroys the session. Safe for concurrent use.
func NewSession(cfg SessionConfig) (*Session, error) {
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
		if err := CheckCUDA(env.lib, cfg.Device); err != nil {
			return nil, err
		}
		cu, err := ort.NewCUDAProviderOptions()
		if err != nil {
			return nil, cudaAppendError(cfg.Device, fmt.Errorf("CUDA provider options: %w", err))
		}
		defer cu.Destroy()
		kv := map[string]string{}
		for i, k := range cudaOptionKeys {
			kv[k] = cudaOptionValues(cfg.Device)[i]
		}
		if err := cu.Update(kv); err != nil {
			return nil, cudaAppendError(cfg.Device, fmt.Errorf("CUDA provider options %v: %w", kv, err))
		}
		if err := opts.AppendExecutionProviderCUDA(cu); err != nil {
			return nil, cudaAppendError(cfg.Device, err)
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
	values []Value
}

// NewTensor wraps data (non-empty, len = product of shape) as a tensor owned
// by ts; data must not be resized until ts.Release.
func NewTensor[T TensorData](ts *Tensors, shape Shape, data []T) (*Tensor[T], error) {
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

// Version is the loaded library's version string ("" before Init).
func Version() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// NewFloat16Tensor wraps data, IEEE half-precision bit patterns, as a
// float16 tensor owned by ts (the output buffer of an fp16 export).
func NewFloat16Tensor(ts *Tensors, shape Shape, data []uint16) (Value, error) {
	if len(data) == 0 {
		return nil, errors.New("ortenv: empty tensor")
	}
	ts.pin.Pin(&data[0])
	t, err := ort.NewCustomDataTensor(shape, unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), 2*len(data)), ort.TensorElementDataTypeFloat16)
	if err != nil {
		return nil, err
	}
	ts.values = append(ts.values, t)
	return t, nil
}

// ElemType names the element type of an output value: "float32",
// "float16", or another ONNX type name.
func ElemType(v Value) string {
	switch t := v.(type) {
	case *ort.Tensor[float32]:
		return "float32"
	case *ort.CustomDataTensor:
		if ort.TensorElementDataType(t.DataType()) == ort.TensorElementDataTypeFloat16 {
			return "float16"
		}
	}
	return fmt.Sprint(ort.TensorElementDataType(v.DataType()))
}
