//go:build amd64 && !purego

package ann

import (
	"golang.org/x/sys/cpu"
)

//go:noescape
func dotTileAVX2(q *float32, qs uintptr, x *float32, xs uintptr, dbytes uintptr, triples uintptr, out *float32)

//go:noescape
func dotTileAVX512(q *float32, qs uintptr, x *float32, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)

//go:noescape
func dotF32AVX2(a, b *float32, n int) float32

//go:noescape
func dotRowsF32AVX2(q, base *float32, ids *int32, nids, dbytes, stride int, out *float32)

//go:noescape
func dotQ1F32AVX512(q *float32, x *float32, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)

//go:noescape
func dotQ1F16AVX512(q *float32, x *uint16, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)

//go:noescape
func dotRowsF16AVX2(q *float32, base *uint16, ids *int32, nids, n, stride int, out *float32)

//go:noescape
func dotRowsI8QVNNI(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)

//go:noescape
func dotSeqI8QVNNI(w *int16, base *int8, rows, n, stride int, out *int32)

//go:noescape
func dotSeqI8Q2VNNI(w, w2 *int16, base *int8, rows, n, stride int, out, out2 *int32)

//go:noescape
func dotRowsI8QAVX512(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)

//go:noescape
func dotRowsI8QAVX2(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)

func init() {
	if cpu.X86.HasAVX2 {
		i8qKernels = append(i8qKernels, i8qKernel{"avx2", 32, dotRowsI8QAVX2})
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW {
		i8qKernels = append(i8qKernels, i8qKernel{"avx512bw", 64, dotRowsI8QAVX512})
		if cpu.X86.HasAVX512VNNI {
			if cpu.X86.HasAVX512VL { // its 16-value step is 256-bit EVEX
				i8qKernels = append(i8qKernels, i8qKernel{"avx512vnni", 16, dotRowsI8QVNNI})
			}
			dotSeqI8QAsm, dotSeqI8Q2Asm = dotSeqI8QVNNI, dotSeqI8Q2VNNI
		}
	}
	if n := len(i8qKernels); n > 0 {
		k := i8qKernels[n-1]
		dotRowsI8QAsm, dotRowsI8QWidth, dotRowsI8QName = k.fn, k.width, k.name
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		dotAsm = dotF32AVX2
		dotRowsAsm = dotRowsF32AVX2
		if cpu.X86.HasF16C {
			dotRowsF16Asm = dotRowsF16AVX2
		}
		avx2 := &tileKernel{name: "avx2", rows: 3, width: 8, asm: dotTileAVX2}
		tileKernels = append(tileKernels, avx2)
		defaultKernel = avx2
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		avx512 := &tileKernel{name: "avx512", rows: 6, width: 16, asm: dotTileAVX512, q1f32: dotQ1F32AVX512, q1f16: dotQ1F16AVX512}
		tileKernels = append(tileKernels, avx512)
		defaultKernel = avx512
	}
}

// callAsm runs an assembly tile kernel. q is [4, d], tile is [rows, d] with
// rows a multiple of k.rows; dv (a positive multiple of k.width) is how many
// leading values of each row are scored; out is [rows, 4].
func (k *tileKernel) callAsm(q []float32, tile []float32, rows, d, dv int, out []float32) {
	_ = q[4*d-1]
	_ = tile[rows*d-1]
	_ = out[4*rows-1]
	k.asm(&q[0], uintptr(d*4), &tile[0], uintptr(d*4), uintptr(dv*4), uintptr(rows/k.rows), &out[0])
}
