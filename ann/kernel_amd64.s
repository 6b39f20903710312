//go:build amd64 && !purego

#include "textflag.h"

// func dotTileAVX2(q *float32, qs uintptr, x *float32, xs uintptr, dbytes uintptr, triples uintptr, out *float32)
//
// Scores 4 query rows (q, q+qs, q+2qs, q+3qs; strides in bytes) against
// 3*triples shard rows (x, x+xs, ...). dbytes is the number of bytes of each
// row to use (a multiple of 32, > 0). out receives, for each row r,
// 4 float32 scores (queries 0..3) at out[4r..4r+3].
// Accumulators: Y0..Y3 row 0 (queries 0..3), Y4..Y7 row 1, Y8..Y11 row 2;
// Y12..Y14 the three rows, Y15 the query.
TEXT ·dotTileAVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ qs+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ xs+24(FP), R9
	MOVQ dbytes+32(FP), CX
	MOVQ triples+40(FP), BX
	MOVQ out+48(FP), DX
	LEAQ (SI)(R8*1), R10
	LEAQ (SI)(R8*2), R11
	LEAQ (R10)(R8*2), R12

rowloop:
	TESTQ BX, BX
	JZ    done
	LEAQ  (DI)(R9*1), R13
	LEAQ  (DI)(R9*2), R14
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ  AX, AX

dloop:
	VMOVUPS (DI)(AX*1), Y12
	VMOVUPS (R13)(AX*1), Y13
	VMOVUPS (R14)(AX*1), Y14
	VMOVUPS (SI)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8
	VMOVUPS (R10)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9
	VMOVUPS (R11)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10
	VMOVUPS (R12)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11
	ADDQ  $32, AX
	CMPQ  AX, CX
	JB    dloop

	// Row 0: hadd(Y0,Y1), hadd(Y2,Y3), hadd of those, fold the 128-bit halves.
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VMOVUPS X4, 16(DX)
	VHADDPS Y9, Y8, Y8
	VHADDPS Y11, Y10, Y10
	VHADDPS Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVUPS X8, 32(DX)

	ADDQ $48, DX
	LEAQ (R14)(R9*1), DI
	DECQ BX
	JMP  rowloop

done:
	VZEROUPPER
	RET

// func dotTileAVX512(q *float32, qs uintptr, x *float32, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)
//
// As dotTileAVX2 with 6 rows per step (dbytes a multiple of 64): Z0..Z23
// accumulators (row r, query j in Z(4r+j)), Z24..Z29 the rows, Z30 the query.
TEXT ·dotTileAVX512(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ qs+8(FP), R8
	MOVQ x+16(FP), DI
	MOVQ xs+24(FP), R9
	MOVQ dbytes+32(FP), CX
	MOVQ out+48(FP), DX
	LEAQ (SI)(R8*1), R10
	LEAQ (SI)(R8*2), R11
	LEAQ (R10)(R8*2), R12

zrowloop:
	CMPQ  sextets+40(FP), $0
	JEQ   zdone
	LEAQ  (DI)(R9*1), R15 // row 1
	LEAQ  (DI)(R9*2), R13 // row 2
	LEAQ  (R13)(R9*1), R8 // row 3
	LEAQ  (R13)(R9*2), R14 // row 4
	LEAQ  (R14)(R9*1), BX // row 5
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	XORQ  AX, AX

zdloop:
	VMOVUPS (DI)(AX*1), Z24
	VMOVUPS (R15)(AX*1), Z25
	VMOVUPS (R13)(AX*1), Z26
	VMOVUPS (R8)(AX*1), Z27
	VMOVUPS (R14)(AX*1), Z28
	VMOVUPS (BX)(AX*1), Z29
	VMOVUPS (SI)(AX*1), Z30
	VFMADD231PS Z30, Z24, Z0
	VFMADD231PS Z30, Z25, Z4
	VFMADD231PS Z30, Z26, Z8
	VFMADD231PS Z30, Z27, Z12
	VFMADD231PS Z30, Z28, Z16
	VFMADD231PS Z30, Z29, Z20
	VMOVUPS (R10)(AX*1), Z30
	VFMADD231PS Z30, Z24, Z1
	VFMADD231PS Z30, Z25, Z5
	VFMADD231PS Z30, Z26, Z9
	VFMADD231PS Z30, Z27, Z13
	VFMADD231PS Z30, Z28, Z17
	VFMADD231PS Z30, Z29, Z21
	VMOVUPS (R11)(AX*1), Z30
	VFMADD231PS Z30, Z24, Z2
	VFMADD231PS Z30, Z25, Z6
	VFMADD231PS Z30, Z26, Z10
	VFMADD231PS Z30, Z27, Z14
	VFMADD231PS Z30, Z28, Z18
	VFMADD231PS Z30, Z29, Z22
	VMOVUPS (R12)(AX*1), Z30
	VFMADD231PS Z30, Z24, Z3
	VFMADD231PS Z30, Z25, Z7
	VFMADD231PS Z30, Z26, Z11
	VFMADD231PS Z30, Z27, Z15
	VFMADD231PS Z30, Z28, Z19
	VFMADD231PS Z30, Z29, Z23
	ADDQ  $64, AX
	CMPQ  AX, CX
	JB    zdloop

	// Fold each 512-bit accumulator to 256 bits, then reduce four at a time.
#define FOLD(z, y) VEXTRACTF64X4 $1, z, Y31; VADDPS Y31, y, y
#define FOLDTO(z, y, dst) VEXTRACTF64X4 $1, z, Y31; VADDPS Y31, y, dst
#define RED4(a, b, c, d, xa, xb, off) VHADDPS b, a, a; VHADDPS d, c, c; VHADDPS c, a, a; VEXTRACTF128 $1, a, xb; VADDPS xb, xa, xa; VMOVUPS xa, off(DX)
	FOLD(Z0, Y0); FOLD(Z1, Y1); FOLD(Z2, Y2); FOLD(Z3, Y3)
	RED4(Y0, Y1, Y2, Y3, X0, X1, 0)
	FOLD(Z4, Y4); FOLD(Z5, Y5); FOLD(Z6, Y6); FOLD(Z7, Y7)
	RED4(Y4, Y5, Y6, Y7, X4, X5, 16)
	FOLD(Z8, Y8); FOLD(Z9, Y9); FOLD(Z10, Y10); FOLD(Z11, Y11)
	RED4(Y8, Y9, Y10, Y11, X8, X9, 32)
	FOLD(Z12, Y12); FOLD(Z13, Y13); FOLD(Z14, Y14); FOLD(Z15, Y15)
	RED4(Y12, Y13, Y14, Y15, X12, X13, 48)
	// VHADDPS has no EVEX form: rows 4 and 5 fold into Y0..Y3 first.
	FOLDTO(Z16, Y16, Y0); FOLDTO(Z17, Y17, Y1); FOLDTO(Z18, Y18, Y2); FOLDTO(Z19, Y19, Y3)
	RED4(Y0, Y1, Y2, Y3, X0, X1, 64)
	FOLDTO(Z20, Y20, Y4); FOLDTO(Z21, Y21, Y5); FOLDTO(Z22, Y22, Y6); FOLDTO(Z23, Y23, Y7)
	RED4(Y4, Y5, Y6, Y7, X4, X5, 80)

	ADDQ $96, DX
	LEAQ (R14)(R9*2), DI
	DECQ sextets+40(FP)
	JMP  zrowloop

zdone:
	VZEROUPPER
	RET

// func dotF32AVX2(a, b *float32, n int) float32
// n is a positive multiple of 16.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ CX, DX
	ANDQ $-128, DX
	JZ   f16
f32loop:
	VMOVUPS (SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VMOVUPS 64(SI)(AX*1), Y6
	VMOVUPS 96(SI)(AX*1), Y7
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	VFMADD231PS 64(DI)(AX*1), Y6, Y2
	VFMADD231PS 96(DI)(AX*1), Y7, Y3
	ADDQ $128, AX
	CMPQ AX, DX
	JB   f32loop
f16:
	CMPQ AX, CX
	JAE  fdone
	VMOVUPS (SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	ADDQ $64, AX
	JMP  f16
fdone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotRowsF32AVX2(q *float32, base *float32, ids *int32, nids int, dbytes int, stride int, out *float32)
//
// out[i] = q · row(ids[i]) over the first dbytes bytes (a positive multiple
// of 64) of each row, row(j) = base + j*stride, for i < nids (> 0). The sums
// run in exactly dotF32AVX2's order, so each out[i] equals its result
// bit for bit. While row i is scored, row i+1 is prefetched line by line
// (the graph's neighbours lie anywhere in memory, so the hardware
// prefetcher cannot find them).
TEXT ·dotRowsF32AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ base+8(FP), R8
	MOVQ ids+16(FP), R9
	MOVQ nids+24(FP), R10
	MOVQ dbytes+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	MOVQ CX, DX
	ANDQ $-128, DX
	// Prefetch the first two lines of every row, so that their misses
	// overlap; the rest of row i+1 is prefetched while row i is scored.
	XORQ AX, AX
pfloop:
	MOVLQSX (R9)(AX*4), DI
	IMULQ R11, DI
	PREFETCHT0 (R8)(DI*1)
	PREFETCHT0 64(R8)(DI*1)
	INCQ AX
	CMPQ AX, R10
	JB   pfloop
	// DI = row(ids[0]).
	MOVLQSX (R9), DI
	IMULQ R11, DI
	ADDQ  R8, DI
rloop:
	// BX = row(ids[i+1]) when i+1 < nids, else the current row.
	MOVQ DI, BX
	CMPQ R10, $1
	JBE  noNext
	MOVLQSX 4(R9), BX
	IMULQ R11, BX
	ADDQ  R8, BX
noNext:
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ DX, DX
	JZ   r16
r32loop:
	PREFETCHT0 (BX)(AX*1)
	PREFETCHT0 64(BX)(AX*1)
	VMOVUPS (SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VMOVUPS 64(SI)(AX*1), Y6
	VMOVUPS 96(SI)(AX*1), Y7
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	VFMADD231PS 64(DI)(AX*1), Y6, Y2
	VFMADD231PS 96(DI)(AX*1), Y7, Y3
	ADDQ $128, AX
	CMPQ AX, DX
	JB   r32loop
r16:
	CMPQ AX, CX
	JAE  rdone
	PREFETCHT0 (BX)(AX*1)
	VMOVUPS (SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	ADDQ $64, AX
	JMP  r16
rdone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	MOVSS X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R9
	MOVQ BX, DI
	DECQ R10
	JNZ  rloop
	VZEROUPPER
	RET

// Single-query kernels for batch 1: dotTileAVX512's arithmetic for query 0
// alone (one accumulator per row, the same fold and horizontal-add order),
// so each score equals the 4-query kernel's bit for bit, at a quarter of
// its FMAs. out[r] receives row r's score. The fp16 form converts each row
// in registers (VCVTPH2PS is exact), reading half the bytes of fp32.
#define Q1ZERO VPXORD Z0, Z0, Z0; VPXORD Z1, Z1, Z1; VPXORD Z2, Z2, Z2; VPXORD Z3, Z3, Z3; VPXORD Z4, Z4, Z4; VPXORD Z5, Z5, Z5
#define Q1RED(z, y, x, off) VEXTRACTF64X4 $1, z, Y31; VADDPS Y31, y, y; VHADDPS y, y, y; VHADDPS y, y, y; VEXTRACTF128 $1, y, X15; VADDPS X15, x, x; VMOVSS x, off(DX)

// func dotQ1F32AVX512(q *float32, x *float32, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)
// dbytes: bytes of q (and of each row) used, a multiple of 64; xs: row stride in bytes.
TEXT ·dotQ1F32AVX512(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xs+16(FP), R9
	MOVQ dbytes+24(FP), CX
	MOVQ sextets+32(FP), R10
	MOVQ out+40(FP), DX
q1frow:
	TESTQ R10, R10
	JZ    q1fdone
	LEAQ  (DI)(R9*1), R15
	LEAQ  (DI)(R9*2), R13
	LEAQ  (R13)(R9*1), R8
	LEAQ  (R13)(R9*2), R14
	LEAQ  (R14)(R9*1), BX
	Q1ZERO
	XORQ  AX, AX
q1fd:
	VMOVUPS (SI)(AX*1), Z30
	VFMADD231PS (DI)(AX*1), Z30, Z0
	VFMADD231PS (R15)(AX*1), Z30, Z1
	VFMADD231PS (R13)(AX*1), Z30, Z2
	VFMADD231PS (R8)(AX*1), Z30, Z3
	VFMADD231PS (R14)(AX*1), Z30, Z4
	VFMADD231PS (BX)(AX*1), Z30, Z5
	ADDQ  $64, AX
	CMPQ  AX, CX
	JB    q1fd
	Q1RED(Z0, Y0, X0, 0)
	Q1RED(Z1, Y1, X1, 4)
	Q1RED(Z2, Y2, X2, 8)
	Q1RED(Z3, Y3, X3, 12)
	Q1RED(Z4, Y4, X4, 16)
	Q1RED(Z5, Y5, X5, 20)
	ADDQ  $24, DX
	LEAQ  (BX)(R9*1), DI
	DECQ  R10
	JMP   q1frow
q1fdone:
	VZEROUPPER
	RET

// func dotQ1F16AVX512(q *float32, x *uint16, xs uintptr, dbytes uintptr, sextets uintptr, out *float32)
// dbytes: bytes of q used (a multiple of 64; each row contributes half as
// many bytes of fp16); xs: row stride in bytes.
TEXT ·dotQ1F16AVX512(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ xs+16(FP), R9
	MOVQ dbytes+24(FP), CX
	MOVQ sextets+32(FP), R10
	MOVQ out+40(FP), DX
q1hrow:
	TESTQ R10, R10
	JZ    q1hdone
	LEAQ  (DI)(R9*1), R15
	LEAQ  (DI)(R9*2), R13
	LEAQ  (R13)(R9*1), R8
	LEAQ  (R13)(R9*2), R14
	LEAQ  (R14)(R9*1), BX
	Q1ZERO
	XORQ  AX, AX
	XORQ  R11, R11
q1hd:
	VMOVUPS (SI)(AX*1), Z30
	VCVTPH2PS (DI)(R11*1), Z24
	VCVTPH2PS (R15)(R11*1), Z25
	VCVTPH2PS (R13)(R11*1), Z26
	VCVTPH2PS (R8)(R11*1), Z27
	VCVTPH2PS (R14)(R11*1), Z28
	VCVTPH2PS (BX)(R11*1), Z29
	VFMADD231PS Z30, Z24, Z0
	VFMADD231PS Z30, Z25, Z1
	VFMADD231PS Z30, Z26, Z2
	VFMADD231PS Z30, Z27, Z3
	VFMADD231PS Z30, Z28, Z4
	VFMADD231PS Z30, Z29, Z5
	ADDQ  $64, AX
	ADDQ  $32, R11
	CMPQ  AX, CX
	JB    q1hd
	Q1RED(Z0, Y0, X0, 0)
	Q1RED(Z1, Y1, X1, 4)
	Q1RED(Z2, Y2, X2, 8)
	Q1RED(Z3, Y3, X3, 12)
	Q1RED(Z4, Y4, X4, 16)
	Q1RED(Z5, Y5, X5, 20)
	ADDQ  $24, DX
	LEAQ  (BX)(R9*1), DI
	DECQ  R10
	JMP   q1hrow
q1hdone:
	VZEROUPPER
	RET

// func dotRowsF16AVX2(q *float32, base *uint16, ids *int32, nids int, n int, stride int, out *float32)
//
// out[i] = q · float32(row(ids[i])) over the first n values (a positive
// multiple of 16) of each fp16 row, row(j) = base + j*stride bytes, with
// the rows converted in registers (VCVTPH2PS, exact) and summed in exactly
// dotF32AVX2's order: each out[i] equals dotF32AVX2 of q and the widened
// row bit for bit. Row i+1 is prefetched while row i is scored.
TEXT ·dotRowsF16AVX2(SB), NOSPLIT, $0-56
	MOVQ q+0(FP), SI
	MOVQ base+8(FP), R8
	MOVQ ids+16(FP), R9
	MOVQ nids+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	SHLQ $1, CX          // CX = bytes of fp16 per row used
	MOVQ CX, DX
	ANDQ $-64, DX        // 32 values = 64 bytes of fp16 per main step
	MOVLQSX (R9), DI
	IMULQ R11, DI
	ADDQ  R8, DI
	PREFETCHT0 (DI)
	PREFETCHT0 64(DI)
hrloop:
	MOVQ DI, BX
	CMPQ R10, $1
	JBE  hnoNext
	MOVLQSX 4(R9), BX
	IMULQ R11, BX
	ADDQ  R8, BX
hnoNext:
	XORQ AX, AX          // fp16 byte offset; q offset is 2*AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	TESTQ DX, DX
	JZ   h16
h32loop:
	PREFETCHT0 (BX)(AX*1)
	VCVTPH2PS (DI)(AX*1), Y4
	VCVTPH2PS 16(DI)(AX*1), Y5
	VCVTPH2PS 32(DI)(AX*1), Y6
	VCVTPH2PS 48(DI)(AX*1), Y7
	VFMADD231PS (SI)(AX*2), Y4, Y0
	VFMADD231PS 32(SI)(AX*2), Y5, Y1
	VFMADD231PS 64(SI)(AX*2), Y6, Y2
	VFMADD231PS 96(SI)(AX*2), Y7, Y3
	ADDQ $64, AX
	CMPQ AX, DX
	JB   h32loop
h16:
	CMPQ AX, CX
	JAE  hdone
	VCVTPH2PS (DI)(AX*1), Y4
	VCVTPH2PS 16(DI)(AX*1), Y5
	VFMADD231PS (SI)(AX*2), Y4, Y0
	VFMADD231PS 32(SI)(AX*2), Y5, Y1
	ADDQ $32, AX
	JMP  h16
hdone:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	MOVSS X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R9
	MOVQ BX, DI
	DECQ R10
	JNZ  hrloop
	VZEROUPPER
	RET

// Integer row kernels for the int8 traversal (dotq.go): out[i] =
// Σ_{j<n} w_j·c_j over the first n values of codes(ids[i]) = base +
// ids[i]*stride, with int16 w and int8 codes widened to int16 in registers;
// exact int32 sums (wmax bounds them), so every kernel equals dotI8Q. The
// first two lines of every listed row are prefetched up front, the rest of
// row i+1 while row i is scored. n: a positive multiple of 16 (VNNI: 64
// at a time, then 16), 64 (AVX-512BW) or 32 (AVX2); nids > 0.

// func dotRowsI8QVNNI(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)
// AVX-512BW/VL + VNNI: VPDPWSSD multiplies 32 int16 pairs and adds them
// into 16 int32 lanes; two accumulators, and a 256-bit step for the last
// n mod 64 values (so a 784-d row has no scalar tail).
TEXT ·dotRowsI8QVNNI(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ base+8(FP), R8
	MOVQ ids+16(FP), R9
	MOVQ nids+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	// DX = n rounded down to the 64-value blocks; the rest (a multiple
	// of 16) is scored 16 at a time in Y16/Y17.
	MOVQ CX, DX
	ANDQ $-64, DX
	XORQ AX, AX
vpf:
	MOVLQSX (R9)(AX*4), DI
	IMULQ R11, DI
	PREFETCHT0 (R8)(DI*1)
	PREFETCHT0 64(R8)(DI*1)
	INCQ AX
	CMPQ AX, R10
	JB vpf
	MOVLQSX (R9), DI
	IMULQ R11, DI
	ADDQ R8, DI
vrow:
	MOVQ DI, BX
	CMPQ R10, $1
	JBE  vnext
	MOVLQSX 4(R9), BX
	IMULQ R11, BX
	ADDQ R8, BX
vnext:
	XORQ AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	TESTQ DX, DX
	JZ   vtail
vloop:
	PREFETCHT0 (BX)(AX*1)
	VPMOVSXBW (DI)(AX*1), Z2
	VPMOVSXBW 32(DI)(AX*1), Z3
	VPDPWSSD (SI)(AX*2), Z2, Z0
	VPDPWSSD 64(SI)(AX*2), Z3, Z1
	ADDQ $64, AX
	CMPQ AX, DX
	JB   vloop
vtail:
	CMPQ AX, CX
	JAE  vsum
	PREFETCHT0 (BX)(AX*1)
	// A 256-bit EVEX write zeroes Z17's upper half, so adding Z17 to Z1
	// below adds the tail's eight lanes only.
	VPXORD Z17, Z17, Z17
vt16:
	VPMOVSXBW (DI)(AX*1), Y16
	VPDPWSSD (SI)(AX*2), Y16, Y17
	ADDQ $16, AX
	CMPQ AX, CX
	JB   vt16
	VPADDD Z17, Z1, Z1
vsum:
	VPADDD Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R9
	MOVQ BX, DI
	DECQ R10
	JNZ  vrow
	VZEROUPPER
	RET

// func dotRowsI8QAVX512(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)
// AVX-512BW without VNNI: VPMADDWD + VPADDD.
TEXT ·dotRowsI8QAVX512(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ base+8(FP), R8
	MOVQ ids+16(FP), R9
	MOVQ nids+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	XORQ AX, AX
bpf:
	MOVLQSX (R9)(AX*4), DI
	IMULQ R11, DI
	PREFETCHT0 (R8)(DI*1)
	PREFETCHT0 64(R8)(DI*1)
	INCQ AX
	CMPQ AX, R10
	JB bpf
	MOVLQSX (R9), DI
	IMULQ R11, DI
	ADDQ R8, DI
brow:
	MOVQ DI, BX
	CMPQ R10, $1
	JBE bnext
	MOVLQSX 4(R9), BX
	IMULQ R11, BX
	ADDQ R8, BX
bnext:
	XORQ AX, AX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
bloop:
	PREFETCHT0 (BX)(AX*1)
	VPMOVSXBW (DI)(AX*1), Z2
	VPMOVSXBW 32(DI)(AX*1), Z3
	VPMADDWD (SI)(AX*2), Z2, Z2
	VPMADDWD 64(SI)(AX*2), Z3, Z3
	VPADDD Z2, Z0, Z0
	VPADDD Z3, Z1, Z1
	ADDQ $64, AX
	CMPQ AX, CX
	JB   bloop
	VPADDD Z1, Z0, Z0
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R9
	MOVQ BX, DI
	DECQ R10
	JNZ  brow
	VZEROUPPER
	RET

// func dotRowsI8QAVX2(w *int16, base *int8, ids *int32, nids, n, stride int, out *int32)
// AVX2: VPMADDWD + VPADDD on 16 values at a time; n a multiple of 32.
TEXT ·dotRowsI8QAVX2(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ base+8(FP), R8
	MOVQ ids+16(FP), R9
	MOVQ nids+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	XORQ AX, AX
apf:
	MOVLQSX (R9)(AX*4), DI
	IMULQ R11, DI
	PREFETCHT0 (R8)(DI*1)
	PREFETCHT0 64(R8)(DI*1)
	INCQ AX
	CMPQ AX, R10
	JB apf
	MOVLQSX (R9), DI
	IMULQ R11, DI
	ADDQ R8, DI
arow:
	MOVQ DI, BX
	CMPQ R10, $1
	JBE anext
	MOVLQSX 4(R9), BX
	IMULQ R11, BX
	ADDQ R8, BX
anext:
	XORQ AX, AX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
aloop:
	PREFETCHT0 (BX)(AX*1)
	VPMOVSXBW (DI)(AX*1), Y2
	VPMOVSXBW 16(DI)(AX*1), Y3
	VPMADDWD (SI)(AX*2), Y2, Y2
	VPMADDWD 32(SI)(AX*2), Y3, Y3
	VPADDD Y2, Y0, Y0
	VPADDD Y3, Y1, Y1
	ADDQ $32, AX
	CMPQ AX, CX
	JB   aloop
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R12)
	ADDQ $4, R12
	ADDQ $4, R9
	MOVQ BX, DI
	DECQ R10
	JNZ  arow
	VZEROUPPER
	RET

// REDUCE4 sums each of four int32 accumulators za..zd (16 lanes) into
// lanes 0..3 of xa: 512 → 256 bits per accumulator (ya..yd their lower
// halves, t0..t3 scratch), then two rounds of VPHADDD leave [a b c d] in
// each 128-bit half, added together (xa is ya's X register; xb, yb's, is
// scratch by then).
#define REDUCE4(za, zb, zc, zd, ya, yb, yc, yd, xa, xb, t0, t1, t2, t3) \
	VEXTRACTI64X4 $1, za, t0 \
	VPADDD t0, ya, ya \
	VEXTRACTI64X4 $1, zb, t1 \
	VPADDD t1, yb, yb \
	VEXTRACTI64X4 $1, zc, t2 \
	VPADDD t2, yc, yc \
	VEXTRACTI64X4 $1, zd, t3 \
	VPADDD t3, yd, yd \
	VPHADDD yb, ya, ya \
	VPHADDD yd, yc, yc \
	VPHADDD yc, ya, ya \
	VEXTRACTI128 $1, ya, xb \
	VPADDD xb, xa, xa

// ZERO4 clears four vector registers; ROWS4 points BX, DX and R9 at rows
// 1–3 of the group starting at DI (R11 = stride, R13 = 3·stride).
#define ZERO4(a, b, c, d) \
	VPXORD a, a, a \
	VPXORD b, b, b \
	VPXORD c, c, c \
	VPXORD d, d, d

#define ROWS4 \
	LEAQ (DI)(R11*1), BX \
	LEAQ (DI)(R11*2), DX \
	LEAQ (DI)(R13*1), R9

// func dotSeqI8QVNNI(w *int16, base *int8, rows, n, stride int, out *int32)
// AVX-512BW + VNNI, for a contiguous scan (Flat): out[r] = Σ_{j<n} w_j·c_j
// over the first n values of rows r = 0…rows-1 at base + r*stride. Four
// rows at a time share each load of w (Z8) in four accumulators (Z0..Z3),
// reduced together: 512 → 256 bits per row, then two rounds of VPHADDD
// leave [r0 r1 r2 r3] in each 128-bit half, added into one store. Exact
// int32 sums, equal to dotI8Q's. n: a positive multiple of 32; rows: a
// positive multiple of 4.
TEXT ·dotSeqI8QVNNI(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ base+8(FP), DI
	MOVQ rows+16(FP), R10
	MOVQ n+24(FP), CX
	MOVQ stride+32(FP), R11
	MOVQ out+40(FP), R12
	LEAQ (R11)(R11*2), R13 // 3*stride
sgroup:
	XORQ AX, AX
	ZERO4(Z0, Z1, Z2, Z3)
	ROWS4
sloop:
	VMOVDQU64 (SI)(AX*2), Z8
	VPMOVSXBW (DI)(AX*1), Z4
	VPMOVSXBW (BX)(AX*1), Z5
	VPMOVSXBW (DX)(AX*1), Z6
	VPMOVSXBW (R9)(AX*1), Z7
	VPDPWSSD Z8, Z4, Z0
	VPDPWSSD Z8, Z5, Z1
	VPDPWSSD Z8, Z6, Z2
	VPDPWSSD Z8, Z7, Z3
	ADDQ $32, AX
	CMPQ AX, CX
	JB   sloop
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, Y4, Y5, Y6, Y7)
	VMOVDQU X0, (R12)
	ADDQ $16, R12
	LEAQ (DI)(R11*4), DI
	SUBQ $4, R10
	JNZ  sgroup
	VZEROUPPER
	RET

// func dotSeqI8Q2VNNI(w *int16, w2 *int16, base *int8, rows, n, stride int, out *int32, out2 *int32)
// dotSeqI8QVNNI for two queries at once (w → out, w2 → out2): each row's
// codes are widened once for both (Z8..Z11), eight accumulators (Z0..Z3
// query 1, Z4..Z7 query 2). Same sums as two dotSeqI8QVNNI calls.
TEXT ·dotSeqI8Q2VNNI(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ w2+8(FP), R14
	MOVQ base+16(FP), DI
	MOVQ rows+24(FP), R10
	MOVQ n+32(FP), CX
	MOVQ stride+40(FP), R11
	MOVQ out+48(FP), R12
	MOVQ out2+56(FP), R15
	LEAQ (R11)(R11*2), R13 // 3*stride
pgroup:
	XORQ AX, AX
	ZERO4(Z0, Z1, Z2, Z3)
	ZERO4(Z4, Z5, Z6, Z7)
	ROWS4
ploop:
	VMOVDQU64 (SI)(AX*2), Z12
	VMOVDQU64 (R14)(AX*2), Z13
	VPMOVSXBW (DI)(AX*1), Z8
	VPMOVSXBW (BX)(AX*1), Z9
	VPDPWSSD Z12, Z8, Z0
	VPDPWSSD Z13, Z8, Z4
	VPMOVSXBW (DX)(AX*1), Z10
	VPDPWSSD Z12, Z9, Z1
	VPDPWSSD Z13, Z9, Z5
	VPMOVSXBW (R9)(AX*1), Z11
	VPDPWSSD Z12, Z10, Z2
	VPDPWSSD Z13, Z10, Z6
	VPDPWSSD Z12, Z11, Z3
	VPDPWSSD Z13, Z11, Z7
	ADDQ $32, AX
	CMPQ AX, CX
	JB   ploop
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, X1, Y8, Y9, Y10, Y11)
	VMOVDQU X0, (R12)
	REDUCE4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4, X5, Y8, Y9, Y10, Y11)
	VMOVDQU X4, (R15)
	ADDQ $16, R12
	ADDQ $16, R15
	LEAQ (DI)(R11*4), DI
	SUBQ $4, R10
	JNZ  pgroup
	VZEROUPPER
	RET
