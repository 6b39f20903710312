//go:build !cgo

package ortenv

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Without cgo (CGO_ENABLED=0: the static binaries bench/gpu/build.sh makes
// for GPU machines), ONNX Runtime's C API is bound at run time with
// github.com/ebitengine/purego, as package cuda binds the CUDA driver: the
// library is dlopened, OrtGetApiBase()->GetApi(apiVersion) returns the
// OrtApi table of function pointers, and the few entries embed and rerank
// need are called by their index in that table. The types and methods
// match the onnxruntime_go ones of ort_cgo.go, so that embed and rerank
// build and behave the same either way. bench/gpu/README.md says why the
// device binaries use this binding (glibc versions) rather than cgo.

// apiVersion is the ORT_API_VERSION asked of GetApi: 24, the version of
// the onnxruntime_c_api.h that onnxruntime_go v1.27.0 (ort_cgo.go) builds
// against, so that both bindings accept the same libraries (ONNX Runtime
// 1.24 or later).
const apiVersion = 24

// Indexes of the OrtApi entries used, offsetof(OrtApi, name)/8 in
// onnxruntime_c_api.h (ORT_API_VERSION 24; the table only ever grows at
// its end, so the indexes hold for every later version).
// TestPuregoSession calls each of them on a real library.
const (
	apiGetErrorCode                  = 1
	apiGetErrorMessage               = 2
	apiCreateEnv                     = 3
	apiCreateSession                 = 7
	apiCreateSessionFromArray        = 8
	apiRun                           = 9
	apiCreateSessionOptions          = 10
	apiSetIntraOpNumThreads          = 24
	apiSetInterOpNumThreads          = 25
	apiCreateTensorWithDataAsOrtVal  = 49
	apiGetTensorMutableData          = 51
	apiGetTensorElementType          = 60
	apiGetDimensionsCount            = 61
	apiGetDimensions                 = 62
	apiGetTensorTypeAndShape         = 65
	apiCreateCpuMemoryInfo           = 69
	apiReleaseStatus                 = 93
	apiReleaseSession                = 95
	apiReleaseValue                  = 96
	apiReleaseTensorTypeAndShapeInfo = 99
	apiReleaseSessionOptions         = 100
	apiAppendCUDAV2                  = 204
	apiCreateCUDAProviderOptions     = 205
	apiUpdateCUDAProviderOptions     = 206
	apiReleaseCUDAProviderOptions    = 208
	apiEntries                       = 209 // entries read (the highest index used + 1)
)

// ONNX tensor element types (onnxruntime_c_api.h, ONNXTensorElementDataType).
const (
	elemFloat   = 1
	elemUint8   = 2
	elemInt8    = 3
	elemUint16  = 4
	elemInt16   = 5
	elemInt32   = 6
	elemInt64   = 7
	elemFloat16 = 10
	elemDouble  = 11
	elemUint32  = 12
	elemUint64  = 13
)

var elemNames = map[int32]string{elemFloat: "float32", elemUint8: "uint8", elemInt8: "int8", elemUint16: "uint16",
	elemInt16: "int16", elemInt32: "int32", elemInt64: "int64", elemFloat16: "float16", elemDouble: "float64",
	elemUint32: "uint32", elemUint64: "uint64"}

// ort is the loaded library: the OrtApi entries as Go functions (purego
// RegisterFunc), the environment and the CPU memory info.
var ort struct {
	errCode  func(st uintptr) int32
	errMsg   func(st uintptr) string
	freeStat func(st uintptr)

	createEnv          func(level int32, logID string, out *uintptr) uintptr
	createSession      func(env uintptr, path string, opts uintptr, out *uintptr) uintptr
	createSessionBytes func(env uintptr, data unsafe.Pointer, n uintptr, opts uintptr, out *uintptr) uintptr
	run                func(s, runOpts uintptr, inNames, in unsafe.Pointer, nIn uintptr, outNames unsafe.Pointer, nOut uintptr, out unsafe.Pointer) uintptr
	createOpts         func(out *uintptr) uintptr
	setIntraOp         func(opts uintptr, n int32) uintptr
	setInterOp         func(opts uintptr, n int32) uintptr
	createTensor       func(info uintptr, data unsafe.Pointer, bytes uintptr, shape unsafe.Pointer, rank uintptr, elem int32, out *uintptr) uintptr
	tensorData         func(v uintptr, out *unsafe.Pointer) uintptr
	elemType           func(info uintptr, out *int32) uintptr
	dimsCount          func(info uintptr, out *uintptr) uintptr
	dims               func(info uintptr, out unsafe.Pointer, n uintptr) uintptr
	typeAndShape       func(v uintptr, out *uintptr) uintptr
	cpuMemInfo         func(allocType, memType int32, out *uintptr) uintptr
	releaseSession     func(uintptr)
	releaseValue       func(uintptr)
	releaseInfo        func(uintptr)
	releaseOpts        func(uintptr)
	appendCUDA         func(opts, cudaOpts uintptr) uintptr
	createCUDAOpts     func(out *uintptr) uintptr
	updateCUDAOpts     func(o uintptr, keys, values unsafe.Pointer, n uintptr) uintptr
	releaseCUDAOpts    func(uintptr)

	version string
	env     uintptr
	memInfo uintptr
}

// ortAPIBase is OrtApiBase: two function pointers.
type ortAPIBase struct{ getAPI, getVersion uintptr }

// Init loads the ONNX Runtime shared library lib and creates the
// process-wide environment on the first call (fatal messages only; every
// failure also comes back as a Go error). Later calls return the first
// call's error, or ErrLibMismatch (wrapped) when they name another
// library. Safe for concurrent use.
func Init(lib string) error {
	return initEnv(lib, load, "; this binary binds it without cgo, through purego")
}

func load(lib string) error {
	h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return err
	}
	sym, err := purego.Dlsym(h, "OrtGetApiBase")
	if err != nil {
		return fmt.Errorf("%s has no OrtGetApiBase: %w", lib, err)
	}
	var getBase func() *ortAPIBase
	purego.RegisterFunc(&getBase, sym)
	base := getBase()
	if base == nil || base.getAPI == 0 {
		return errors.New("OrtGetApiBase returned no API")
	}
	var getAPI func(uint32) *[apiEntries]uintptr
	var getVersion func() string
	purego.RegisterFunc(&getAPI, base.getAPI)
	purego.RegisterFunc(&getVersion, base.getVersion)
	ort.version = getVersion()
	tbl := getAPI(apiVersion)
	if tbl == nil {
		return fmt.Errorf("ONNX Runtime %s does not offer C API version %d (ONNX Runtime 1.24 or later is needed)", ort.version, apiVersion)
	}
	for _, f := range []struct {
		fn  any
		idx int
	}{
		{&ort.errCode, apiGetErrorCode}, {&ort.errMsg, apiGetErrorMessage}, {&ort.freeStat, apiReleaseStatus},
		{&ort.createEnv, apiCreateEnv}, {&ort.createSession, apiCreateSession}, {&ort.createSessionBytes, apiCreateSessionFromArray},
		{&ort.run, apiRun}, {&ort.createOpts, apiCreateSessionOptions}, {&ort.setIntraOp, apiSetIntraOpNumThreads},
		{&ort.setInterOp, apiSetInterOpNumThreads}, {&ort.createTensor, apiCreateTensorWithDataAsOrtVal},
		{&ort.tensorData, apiGetTensorMutableData}, {&ort.elemType, apiGetTensorElementType}, {&ort.dimsCount, apiGetDimensionsCount},
		{&ort.dims, apiGetDimensions}, {&ort.typeAndShape, apiGetTensorTypeAndShape}, {&ort.cpuMemInfo, apiCreateCpuMemoryInfo},
		{&ort.releaseSession, apiReleaseSession}, {&ort.releaseValue, apiReleaseValue}, {&ort.releaseInfo, apiReleaseTensorTypeAndShapeInfo},
		{&ort.releaseOpts, apiReleaseSessionOptions}, {&ort.appendCUDA, apiAppendCUDAV2},
		{&ort.createCUDAOpts, apiCreateCUDAProviderOptions}, {&ort.updateCUDAOpts, apiUpdateCUDAProviderOptions},
		{&ort.releaseCUDAOpts, apiReleaseCUDAProviderOptions},
	} {
		if tbl[f.idx] == 0 {
			return fmt.Errorf("ONNX Runtime %s: C API entry %d is empty", ort.version, f.idx)
		}
		purego.RegisterFunc(f.fn, tbl[f.idx])
	}
	const logFatal = 4 // ORT_LOGGING_LEVEL_FATAL
	if err := status(ort.createEnv(logFatal, "rlsearch", &ort.env)); err != nil {
		return fmt.Errorf("CreateEnv: %w", err)
	}
	const arena, memDefault = 1, 0 // OrtArenaAllocator, OrtMemTypeDefault
	if err := status(ort.cpuMemInfo(arena, memDefault, &ort.memInfo)); err != nil {
		return fmt.Errorf("CreateCpuMemoryInfo: %w", err)
	}
	return nil
}

// Error is a failed ONNX Runtime call (an OrtStatus).
type Error struct {
	Code int32 // OrtErrorCode
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("onnxruntime error %d: %s", e.Code, e.Msg) }

// status converts an OrtStatus* (0 = success) to an error and releases it.
func status(st uintptr) error {
	if st == 0 {
		return nil
	}
	e := &Error{Code: ort.errCode(st), Msg: ort.errMsg(st)}
	ort.freeStat(st)
	return e
}

// Version is the loaded library's version string ("" before Init).
func Version() string { return ort.version }

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(p), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(p, n))
}

// cStrings are NUL-terminated copies of names and the array of their
// addresses (const char* const*), pinned until unpin.
type cStrings struct {
	bufs [][]byte
	ptrs []unsafe.Pointer
	pin  runtime.Pinner
}

func newCStrings(names []string) *cStrings {
	c := &cStrings{}
	for _, n := range names {
		b := append([]byte(n), 0)
		c.pin.Pin(&b[0])
		c.bufs = append(c.bufs, b)
		c.ptrs = append(c.ptrs, unsafe.Pointer(&b[0]))
	}
	if len(c.ptrs) > 0 {
		c.pin.Pin(&c.ptrs[0])
	}
	return c
}

func (c *cStrings) first() unsafe.Pointer {
	if len(c.ptrs) == 0 {
		return nil
	}
	return unsafe.Pointer(&c.ptrs[0])
}

// Session is an ORT session over dynamic inputs and outputs, like
// onnxruntime_go's DynamicAdvancedSession. Run may be called from several
// goroutines at once (ORT sessions are thread-safe for Run).
type Session struct {
	h       uintptr
	inputs  *cStrings
	outputs *cStrings
	nIn     int
	nOut    int
}

// NewSession creates one ORT session: the one constructor of every
// package that runs ONNX models. Init must have succeeded. The caller
// destroys the session. Safe for concurrent use.
func NewSession(cfg SessionConfig) (*Session, error) {
	if ort.env == 0 {
		return nil, errors.New("ortenv: ONNX Runtime is not initialised (call Init first)")
	}
	if cfg.CUDA {
		if err := CheckCUDA(env.lib, cfg.Device); err != nil {
			return nil, err
		}
	}
	var opts uintptr
	if err := status(ort.createOpts(&opts)); err != nil {
		return nil, err
	}
	defer ort.releaseOpts(opts)
	if err := status(ort.setIntraOp(opts, int32(cfg.IntraOp))); err != nil {
		return nil, err
	}
	if err := status(ort.setInterOp(opts, 1)); err != nil {
		return nil, err
	}
	if cfg.CUDA {
		var cu uintptr
		if err := status(ort.createCUDAOpts(&cu)); err != nil {
			return nil, cudaAppendError(cfg.Device, fmt.Errorf("CUDA provider options: %w", err))
		}
		defer ort.releaseCUDAOpts(cu)
		keys, vals := newCStrings(cudaOptionKeys), newCStrings(cudaOptionValues(cfg.Device))
		err := status(ort.updateCUDAOpts(cu, keys.first(), vals.first(), uintptr(len(cudaOptionKeys))))
		keys.pin.Unpin()
		vals.pin.Unpin()
		if err != nil {
			return nil, cudaAppendError(cfg.Device, fmt.Errorf("CUDA provider options %v = %v: %w", cudaOptionKeys, cudaOptionValues(cfg.Device), err))
		}
		if err := status(ort.appendCUDA(opts, cu)); err != nil {
			return nil, cudaAppendError(cfg.Device, err)
		}
	}
	var h uintptr
	var err error
	if cfg.Model != nil {
		if len(cfg.Model) == 0 {
			return nil, errors.New("ortenv: empty model")
		}
		err = status(ort.createSessionBytes(ort.env, unsafe.Pointer(&cfg.Model[0]), uintptr(len(cfg.Model)), opts, &h))
		runtime.KeepAlive(cfg.Model)
	} else {
		err = status(ort.createSession(ort.env, cfg.Path, opts, &h))
	}
	if err != nil {
		return nil, err
	}
	return &Session{h: h, inputs: newCStrings(cfg.Inputs), outputs: newCStrings(cfg.Outputs), nIn: len(cfg.Inputs), nOut: len(cfg.Outputs)}, nil
}

// Run runs the session on inputs (in SessionConfig.Inputs order) and
// writes outputs (in SessionConfig.Outputs order): a non-nil output is a
// tensor made by NewTensor or NewFloat16Tensor that ORT writes into; a nil
// one is allocated by ORT and returned as a Go tensor (its data copied,
// the ORT value released), which the caller destroys.
func (s *Session) Run(inputs, outputs []Value) error {
	if s.h == 0 {
		return errors.New("ortenv: session is destroyed")
	}
	if len(inputs) != s.nIn || len(outputs) != s.nOut {
		return fmt.Errorf("ortenv: run with %d inputs and %d outputs, the session has %d and %d", len(inputs), len(outputs), s.nIn, s.nOut)
	}
	in := make([]uintptr, len(inputs))
	for i, v := range inputs {
		h, ok := v.(handle)
		if !ok || h.ortValue() == 0 {
			return fmt.Errorf("ortenv: input %d is not a live tensor", i)
		}
		in[i] = h.ortValue()
	}
	out := make([]uintptr, len(outputs))
	for i, v := range outputs {
		if v == nil {
			continue
		}
		h, ok := v.(handle)
		if !ok || h.ortValue() == 0 {
			return fmt.Errorf("ortenv: output %d is not a live tensor", i)
		}
		out[i] = h.ortValue()
	}
	var pin runtime.Pinner
	pin.Pin(&in[0])
	pin.Pin(&out[0])
	err := status(ort.run(s.h, 0, s.inputs.first(), unsafe.Pointer(&in[0]), uintptr(len(in)), s.outputs.first(), uintptr(len(out)), unsafe.Pointer(&out[0])))
	pin.Unpin()
	if err != nil {
		// Values ORT allocated before failing are released.
		for i, v := range outputs {
			if v == nil && out[i] != 0 {
				ort.releaseValue(out[i])
			}
		}
		return err
	}
	for i, v := range outputs {
		if v != nil {
			continue
		}
		t, err := copyOut(out[i])
		ort.releaseValue(out[i])
		if err != nil {
			return fmt.Errorf("ortenv: output %d: %w", i, err)
		}
		outputs[i] = t
	}
	return nil
}

// copyOut copies an ORT-allocated tensor into a Go tensor of its type.
func copyOut(v uintptr) (Value, error) {
	var info uintptr
	if err := status(ort.typeAndShape(v, &info)); err != nil {
		return nil, err
	}
	defer ort.releaseInfo(info)
	var elem int32
	if err := status(ort.elemType(info, &elem)); err != nil {
		return nil, err
	}
	var rank uintptr
	if err := status(ort.dimsCount(info, &rank)); err != nil {
		return nil, err
	}
	shape := make(Shape, rank)
	if rank > 0 {
		if err := status(ort.dims(info, unsafe.Pointer(&shape[0]), rank)); err != nil {
			return nil, err
		}
	}
	var p unsafe.Pointer
	if err := status(ort.tensorData(v, &p)); err != nil {
		return nil, err
	}
	n := int(shape.FlattenedSize())
	switch elem {
	case elemFloat:
		return &Tensor[float32]{shape: shape, data: slices.Clone(unsafe.Slice((*float32)(p), n)), elem: elem}, nil
	case elemFloat16, elemUint16:
		return &Tensor[uint16]{shape: shape, data: slices.Clone(unsafe.Slice((*uint16)(p), n)), elem: elem}, nil
	case elemInt64:
		return &Tensor[int64]{shape: shape, data: slices.Clone(unsafe.Slice((*int64)(p), n)), elem: elem}, nil
	case elemInt32:
		return &Tensor[int32]{shape: shape, data: slices.Clone(unsafe.Slice((*int32)(p), n)), elem: elem}, nil
	}
	return nil, fmt.Errorf("element type %d is not supported here", elem)
}

// Destroy releases the session. Idempotent.
func (s *Session) Destroy() error {
	if s.h != 0 {
		ort.releaseSession(s.h)
		s.h = 0
		s.inputs.pin.Unpin()
		s.outputs.pin.Unpin()
	}
	return nil
}

// Value is an ORT input or output value.
type Value interface {
	DataType() string
	GetShape() Shape
	Destroy() error
}

// handle is implemented by the tensors here: their ORT value (0 when the
// data lives in Go only).
type handle interface{ ortValue() uintptr }

// Shape is a tensor shape.
type Shape []int64

// NewShape returns the shape of dims.
func NewShape(dims ...int64) Shape { return Shape(slices.Clone(dims)) }

// Equals reports whether two shapes are the same.
func (s Shape) Equals(o Shape) bool { return slices.Equal(s, o) }

// FlattenedSize is the product of the dimensions.
func (s Shape) FlattenedSize() int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

func (s Shape) String() string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += " "
		}
		out += strconv.FormatInt(d, 10)
	}
	return out + "]"
}

// TensorData are the element types a Tensor may hold.
type TensorData interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Tensor is a shape over a Go slice, with the ORT value over the same
// memory when it was made by NewTensor.
type Tensor[T TensorData] struct {
	shape Shape
	data  []T
	elem  int32
	v     uintptr
}

// GetData returns the slice.
func (t *Tensor[T]) GetData() []T { return t.data }

// GetShape returns the shape.
func (t *Tensor[T]) GetShape() Shape { return t.shape }

// DataType names the element type ("float32", "float16", ...).
func (t *Tensor[T]) DataType() string {
	if n, ok := elemNames[t.elem]; ok {
		return n
	}
	return fmt.Sprintf("%T", *new(T))
}

// Destroy releases the ORT value. Idempotent.
func (t *Tensor[T]) Destroy() error {
	if t.v != 0 {
		ort.releaseValue(t.v)
		t.v = 0
	}
	return nil
}

func (t *Tensor[T]) ortValue() uintptr { return t.v }

func elemOf[T TensorData]() int32 {
	switch any(*new(T)).(type) {
	case float32:
		return elemFloat
	case float64:
		return elemDouble
	case int8:
		return elemInt8
	case uint8:
		return elemUint8
	case int16:
		return elemInt16
	case uint16:
		return elemUint16
	case int32:
		return elemInt32
	case uint32:
		return elemUint32
	case int64:
		return elemInt64
	case uint64:
		return elemUint64
	}
	return 0
}

// Tensors holds the ORT values of one run. The Go slices behind them are
// pinned while ORT holds pointers to them; Release destroys the values
// and unpins. Not safe for concurrent use; the zero value is ready.
type Tensors struct {
	pin    runtime.Pinner
	values []Value
}

// NewTensor wraps data (non-empty, len = product of shape) as a tensor owned
// by ts; data must not be resized until ts.Release.
func NewTensor[T TensorData](ts *Tensors, shape Shape, data []T) (*Tensor[T], error) {
	return newTensor(ts, shape, data, elemOf[T]())
}

func newTensor[T TensorData](ts *Tensors, shape Shape, data []T, elem int32) (*Tensor[T], error) {
	if len(data) == 0 {
		return nil, errors.New("ortenv: empty tensor")
	}
	if shape.FlattenedSize() != int64(len(data)) {
		return nil, fmt.Errorf("ortenv: shape %v holds %d values, data has %d", shape, shape.FlattenedSize(), len(data))
	}
	if ort.memInfo == 0 {
		return nil, errors.New("ortenv: ONNX Runtime is not initialised")
	}
	shape = slices.Clone(shape)
	ts.pin.Pin(&data[0])
	ts.pin.Pin(&shape[0])
	t := &Tensor[T]{shape: shape, data: data, elem: elem}
	size := uintptr(len(data)) * unsafe.Sizeof(data[0])
	if err := status(ort.createTensor(ort.memInfo, unsafe.Pointer(&data[0]), size, unsafe.Pointer(&shape[0]), uintptr(len(shape)), elem, &t.v)); err != nil {
		return nil, err
	}
	ts.values = append(ts.values, t)
	return t, nil
}

// NewFloat16Tensor wraps data, IEEE half-precision bit patterns, as a
// float16 tensor owned by ts (the output buffer of an fp16 export).
func NewFloat16Tensor(ts *Tensors, shape Shape, data []uint16) (Value, error) {
	return newTensor(ts, shape, data, elemFloat16)
}

// Release destroys every tensor of ts and unpins their data.
func (ts *Tensors) Release() {
	for _, v := range ts.values {
		v.Destroy()
	}
	ts.values = nil
	ts.pin.Unpin()
}

// ElemType names the element type of an output value: "float32",
// "float16", or another ONNX type name.
func ElemType(v Value) string { return v.DataType() }
