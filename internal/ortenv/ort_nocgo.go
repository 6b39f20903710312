//go:build !cgo

package ortenv

import (
	"errors"
	"fmt"
	"slices"
)

// Stand-ins for the onnxruntime_go types of ort_cgo.go, with the methods
// embed and rerank call, so that they build without cgo. No session can
// be created (NewSession fails with ErrNoCgo), so Run is never reached
// with a real model.

// Session stands in for an ORT session; none can be created without cgo.
type Session struct{}

// Run fails with ErrNoCgo.
func (*Session) Run(inputs, outputs []Value) error { return ErrNoCgo }

// Destroy does nothing.
func (*Session) Destroy() error { return nil }

// Value is an ORT input or output value.
type Value interface {
	DataType() string
	GetShape() Shape
	Destroy() error
}

// Shape is a tensor shape.
type Shape []int64

// NewShape returns the shape of dims.
func NewShape(dims ...int64) Shape { return Shape(dims) }

// Equals reports whether two shapes are the same.
func (s Shape) Equals(o Shape) bool { return slices.Equal(s, o) }

// TensorData are the element types a Tensor may hold.
type TensorData interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Tensor is a shape over a Go slice.
type Tensor[T TensorData] struct {
	shape Shape
	data  []T
}

// GetData returns the slice.
func (t *Tensor[T]) GetData() []T { return t.data }

// GetShape returns the shape.
func (t *Tensor[T]) GetShape() Shape { return t.shape }

// DataType names the element type.
func (t *Tensor[T]) DataType() string { return fmt.Sprintf("%T", *new(T)) }

// Destroy does nothing.
func (t *Tensor[T]) Destroy() error { return nil }

// Init fails with ErrNoCgo.
func Init(lib string) error { return fmt.Errorf("load ONNX Runtime from %q: %w", lib, ErrNoCgo) }

// NewSession fails with ErrNoCgo.
func NewSession(cfg SessionConfig) (*Session, error) { return nil, ErrNoCgo }

// Tensors holds the values of one run; the zero value is ready.
type Tensors struct{ values []Value }

// NewTensor wraps data (non-empty, len = product of shape) as a tensor
// owned by ts.
func NewTensor[T TensorData](ts *Tensors, shape Shape, data []T) (*Tensor[T], error) {
	if len(data) == 0 {
		return nil, errors.New("ortenv: empty tensor")
	}
	t := &Tensor[T]{shape: shape, data: data}
	ts.values = append(ts.values, t)
	return t, nil
}

// Release drops the tensors of ts.
func (ts *Tensors) Release() { ts.values = nil }

// FlattenedSize is the product of the dimensions.
func (s Shape) FlattenedSize() int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}
