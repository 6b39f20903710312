package main

import (
	"encoding/binary"
	"io"
	"math"
	"testing"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch/ann"
)

// collectRows reads src to the end: blocks in order, whole rows of
// rowBytes, n rows in all; the bytes.
func collectRows(t *testing.T, src ann.RowSource, rowBytes, n int) []byte {
	t.Helper()
	var all []byte
	seen := 0
	for {
		row0, raw, err := src()
		if err == io.EOF {
			break
		}
		if err != nil || row0 != seen || len(raw)%rowBytes != 0 {
			t.Fatalf("block at %d (%d bytes), want row %d of %d-byte rows: %v", row0, len(raw), seen, rowBytes, err)
		}
		seen += len(raw) / rowBytes
		all = append(all, raw...)
	}
	if seen != n {
		t.Fatalf("%d rows, want %d", seen, n)
	}
	return all
}

// TestUnitRows: rows in order, unit length to fp16 precision, the first
// rows of a larger corpus equal those of a smaller one.
func TestUnitRows(t *testing.T) {
	const dim = 20
	small, big := collectRows(t, UnitRows(1000, dim, 3), 2*dim, 1000), collectRows(t, UnitRows(70000, dim, 3), 2*dim, 70000)
	if string(small) != string(big[:len(small)]) {
		t.Fatal("the first 1,000 rows differ between n = 1,000 and n = 70,000")
	}
	for r := 0; r < 70000; r += 997 {
		var ss float64
		for j := 0; j < dim; j++ {
			v := float64(float16.Frombits(binary.LittleEndian.Uint16(big[2*(r*dim+j):])).Float32())
			ss += v * v
		}
		if math.Abs(ss-1) > 3e-3 {
			t.Fatalf("row %d: squared norm %v", r, ss)
		}
	}
}

func BenchmarkUnitRows(b *testing.B) {
	for i := 0; i < b.N; i++ {
		src := UnitRows(1<<16, 768, 1)
		if _, _, err := src(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N<<16)/b.Elapsed().Seconds(), "rows/s")
}

func TestToF16(t *testing.T) {
	for i := uint32(0); i < 1<<32-1<<12; i += 4093 {
		f := math.Float32frombits(i)
		if f != f {
			continue
		}
		if got, want := toF16(f), float16.Fromfloat32(f).Bits(); got != want {
			t.Fatalf("toF16(%v = %#x) = %#x, want %#x", f, i, got, want)
		}
	}
}

// TestInt8Rows: rows in order, codes in [-127, 127], the first rows of a
// larger corpus equal those of a smaller one, and rows of about unit
// squared norm under Int8Header's scale.
func TestInt8Rows(t *testing.T) {
	const dim = 768
	small, big := collectRows(t, Int8Rows(1000, dim, 3), dim, 1000), collectRows(t, Int8Rows(70000, dim, 3), dim, 70000)
	if string(small) != string(big[:len(small)]) {
		t.Fatal("the first 1,000 rows differ between n = 1,000 and n = 70,000")
	}
	h := Int8Header(70000, dim)
	var mean float64
	for r := 0; r < 70000; r++ {
		var ss float64
		for j := 0; j < dim; j++ {
			c := int8(big[r*dim+j])
			if c == -128 {
				t.Fatalf("row %d has code -128", r)
			}
			v := float64(h.Scale[j]) * float64(c)
			ss += v * v
		}
		mean += ss / 70000
	}
	if math.Abs(mean-1) > 0.003 {
		t.Fatalf("mean squared norm %v, want about 1", mean)
	}
}
