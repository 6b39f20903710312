//go:build !cgo

package ortenv

import (
	"errors"
	"testing"
)

// TestNoCgo: without cgo, Init and NewSession name why ONNX Runtime is
// unavailable (ErrNoCgo), and tensors still carry their shape and data
// (make vet builds and runs this with CGO_ENABLED=0).
func TestNoCgo(t *testing.T) {
	if err := Init(DefaultLib); !errors.Is(err, ErrNoCgo) {
		t.Errorf("Init: %v, want ErrNoCgo", err)
	}
	if s, err := NewSession(SessionConfig{Path: "model.onnx"}); s != nil || !errors.Is(err, ErrNoCgo) {
		t.Errorf("NewSession: %v, %v, want ErrNoCgo", s, err)
	}
	var ts Tensors
	defer ts.Release()
	x, err := NewTensor(&ts, NewShape(2, 3), []float32{1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if !x.GetShape().Equals(NewShape(2, 3)) || x.GetShape().FlattenedSize() != 6 || x.GetData()[5] != 6 || x.DataType() != "float32" {
		t.Errorf("tensor: shape %v, data %v, type %s", x.GetShape(), x.GetData(), x.DataType())
	}
	if _, err := NewTensor(&ts, NewShape(0), []int64{}); err == nil {
		t.Error("an empty tensor was accepted")
	}
}
