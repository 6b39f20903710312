package transformer

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/x448/float16"
	"golang.org/x/sys/unix"
)

// DType is a tensor's element type in a weight file.
type DType int

// Element types the loaders read (safetensors F32/F16/BF16; ONNX FLOAT,
// FLOAT16, BFLOAT16).
const (
	F32 DType = iota
	F16
	BF16
)

func (d DType) String() string {
	switch d {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case BF16:
		return "BF16"
	}
	return fmt.Sprintf("DType(%d)", int(d))
}

// Size is the element size in bytes.
func (d DType) Size() int {
	if d == F32 {
		return 4
	}
	return 2
}

// Tensor is one weight as stored in a file: little-endian elements of
// DType. Shape is the logical shape (Hugging Face's: a Linear weight is
// [out, in]); Transposed means the bytes hold the transpose of a 2-D
// logical tensor ([in, out], as ONNX exports feed MatMul), which the
// accessors undo. Data points into the loaded file (a read-only memory
// mapping owned by the Weights it came from) and is valid until that
// Weights is closed. Safe for concurrent reads.
type Tensor struct {
	Name       string
	DType      DType
	Shape      []int
	Transposed bool
	data       []byte
}

// Len is the number of elements.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// at returns element i of the stored (not logical) order as float32.
func (t *Tensor) at(i int) float32 {
	switch t.DType {
	case F32:
		return math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
	case F16:
		return float16.Frombits(binary.LittleEndian.Uint16(t.data[2*i:])).Float32()
	default: // BF16: the high half of a float32
		return math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.data[2*i:])) << 16)
	}
}

// storedIndex maps logical element i (row-major over Shape) to its stored
// position.
func (t *Tensor) storedIndex(i int) int {
	if !t.Transposed {
		return i
	}
	rows, cols := t.Shape[0], t.Shape[1]
	r, c := i/cols, i%cols
	return c*rows + r
}

// Float32 returns the tensor in logical row-major order as float32 (a new
// slice owned by the caller).
func (t *Tensor) Float32() []float32 {
	out := make([]float32, t.Len())
	parallelRange(len(out), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = t.at(t.storedIndex(i))
		}
	})
	return out
}

// Row returns logical row r of a 2-D tensor as float32.
func (t *Tensor) Row(r int) []float32 {
	cols := t.Shape[1]
	out := make([]float32, cols)
	for c := range out {
		out[c] = t.at(t.storedIndex(r*cols + c))
	}
	return out
}

// Float16Into writes the tensor in logical row-major order as binary16
// bits into dst[:Len()], rounding to nearest even (bf16 and f32 values
// beyond fp16's range become ±Inf, which the loaders refuse). It returns
// the number of elements that overflowed to ±Inf and of non-finite inputs.
func (t *Tensor) Float16Into(dst []uint16) (overflow int) {
	var mu sync.Mutex
	parallelRange(t.Len(), func(lo, hi int) {
		n := 0
		for i := lo; i < hi; i++ {
			s := t.storedIndex(i)
			if t.DType == F16 {
				dst[i] = binary.LittleEndian.Uint16(t.data[2*s:])
				if dst[i]&0x7c00 == 0x7c00 {
					n++
				}
				continue
			}
			f := t.at(s)
			h := float16.Fromfloat32(f).Bits()
			if h&0x7c00 == 0x7c00 { // Inf or NaN after rounding
				n++
			}
			dst[i] = h
		}
		mu.Lock()
		overflow += n
		mu.Unlock()
	})
	return overflow
}

// parallelRange splits [0, n) over GOMAXPROCS goroutines when n is large.
func parallelRange(n int, fn func(lo, hi int)) {
	const min = 1 << 16
	w := runtime.GOMAXPROCS(0)
	if n < min || w == 1 {
		fn(0, n)
		return
	}
	per := (n + w - 1) / w
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += per {
		hi := lo + per
		if hi > n {
			hi = n
		}
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// mapFile maps path read-only. The returned function unmaps it.
func mapFile(path string) ([]byte, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() == 0 {
		return nil, func() error { return nil }, nil
	}
	if st.Size() > math.MaxInt {
		return nil, nil, fmt.Errorf("%s: %d bytes is too large to map", path, st.Size())
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("map %s: %w", path, err)
	}
	return b, func() error { return unix.Munmap(b) }, nil
}
