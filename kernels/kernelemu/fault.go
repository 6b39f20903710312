package kernelemu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/cuda"
)

// Fault kinds of Faulty: what a broken device does to a forward pass's
// result (the one device-to-host copy at its end, rows of RowBytes bytes
// of float32).
const (
	// FaultWrong negates and triples every value of row 1 (row 0 when
	// there is one row).
	FaultWrong = "wrong"
	// FaultDrop drops row 1: the rows after it move up one, the last row
	// is zeros (a kernel that skipped a sequence of a packed batch).
	FaultDrop = "drop"
	// FaultNaN makes the first value of the last row NaN.
	FaultNaN = "nan"
)

// Faulty is an Emu whose device-to-host copies of more than one value are
// corrupted as Mode says: a fault-injected device for the model canaries
// (embed, rerank) to catch. The forward passes of package transformer copy
// one result per pass, so every pass's result is corrupted.
type Faulty struct {
	*Emu
	Mode     string
	RowBytes int // bytes per result row (4 × hidden size; 8 for the Qwen3 no/yes logits)
}

// CopyDtoH copies, then corrupts dst.
func (f *Faulty) CopyDtoH(dst []byte, src cuda.DevPtr) error {
	if err := f.Emu.CopyDtoH(dst, src); err != nil {
		return err
	}
	rb := f.RowBytes
	if rb <= 0 || len(dst)%rb != 0 || len(dst) <= 4 {
		return nil
	}
	rows := len(dst) / rb
	r := min(1, rows-1)
	switch f.Mode {
	case FaultWrong:
		for i := r * rb; i < (r+1)*rb; i += 4 {
			v := math.Float32frombits(binary.LittleEndian.Uint32(dst[i:]))
			binary.LittleEndian.PutUint32(dst[i:], math.Float32bits(-3*v-0.5))
		}
	case FaultDrop:
		copy(dst[r*rb:], dst[(r+1)*rb:])
		clear(dst[(rows-1)*rb:])
	case FaultNaN:
		binary.LittleEndian.PutUint32(dst[(rows-1)*rb:], math.Float32bits(float32(math.NaN())))
	default:
		return fmt.Errorf("kernelemu: unknown fault %q", f.Mode)
	}
	return nil
}
