package kernels_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/kernels"
	"github.com/rlsearch/rlsearch/kernels/kernelemu"
)

// The kernels of scan.cu run here on the CPU emulator: their own source
// (cp.async pipeline, swizzled shared memory, ldmatrix, mma.sync
// fragments, the epilogue's warp vote and atomics, rls_filter's ballot
// compaction, rls_merge's radix select and bitonic sort) against the plain
// Go references. Each case runs in the eight emulator modes: threads of a
// block in increasing and decreasing order, all in step or one warp at a
// time (a missing __syncthreads), and cp.async copies landing at the copy
// or at the last wait_group allowed (a read before its wait, a refill of a
// stage still being read). Scores are
// small multiples of 1/4, exact in float32 in any summation order, so the
// tensor-core order and the reference's agree bit for bit and ties are
// common. The GPU runs the same kernels in TestScanKernelsGPU.

// emuModes runs fn in the emulator's eight modes.
func emuModes(t *testing.T, fn func(t *testing.T, e *kernelemu.Emu)) {
	e := kernelemu.Open(t)
	for _, warpMajor := range []bool{false, true} {
		for _, rev := range []bool{false, true} {
			for _, late := range []bool{false, true} {
				t.Run(fmt.Sprintf("warpmajor=%v,reverse=%v,late=%v", warpMajor, rev, late), func(t *testing.T) {
					e.SetWarpMajor(warpMajor)
					e.SetReverse(rev)
					e.SetAsyncLate(late)
					defer e.SetWarpMajor(false)
					defer e.SetReverse(false)
					defer e.SetAsyncLate(false)
					fn(t, e)
				})
			}
		}
	}
}

func bi32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	kernels.DecodeInt32s(v, b)
	return v
}

func bu32(b []byte) []uint32 {
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v
}

func bpairs(b []byte) []kernels.Pair {
	p := make([]kernels.Pair, len(b)/kernels.PairBytes)
	kernels.DecodePairs(p, b)
	return p
}

// sameSurvivors is SurvivorsEqual (counts exact, survivors as sets: the
// kernels append in an unspecified order); got was poisoned (0xff) before
// the launch, and its slots past each query's count must still be.
func sameSurvivors(t *testing.T, what string, nq, cap int, got []kernels.Pair, gotN []int32, want []kernels.Pair, wantN []int32) {
	t.Helper()
	kernels.SurvivorsEqual(t, what, nq, cap, got, gotN, want, wantN)
	for q := 0; q < nq; q++ {
		n := min(int(gotN[q]), cap)
		for i, p := range got[q*cap+n : (q+1)*cap] {
			if p != (kernels.Pair{Key: math.MaxUint32, Row: -1}) {
				t.Fatalf("%s: query %d slot %d past its %d survivors was written: %+v", what, q, n+i, n, p)
			}
		}
	}
}

// TestScanEmu: rls_scan16/64/128 on persistent grids smaller than their
// work (several work items per block, the pipeline running across them),
// ranges that start and end inside a tile (also where one lane's rows
// straddle the end), dims that end inside a BK
// chunk, batches of one and of more than one query block, thresholds of
// 0 and above, against ScanRef.
func TestScanEmu(t *testing.T) {
	type shape struct{ dim, rowLo, rowHi, nq, grid int }
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(41, 2))
		for ci, sc := range kernels.ScanConfigs {
			if sc.Int8 {
				continue // TestScanI8Emu
			}
			for _, sh := range []shape{{8, 0, 1, 1, 1}, {72, 5, 300, 3, 2}, {40, 0, 129, sc.BN + 1, 3}, {136, 200, 457, sc.BN/2 + 1, 1},
				// ranges that end where a lane holds rows on both sides of rowHi
				{24, 0, 139, 2, 2}, {24, 0, 143, 2, 1}} {
				what := fmt.Sprintf("%s dim=%d rows=[%d,%d) nq=%d grid=%d", sc.Name, sh.dim, sh.rowLo, sh.rowHi, sh.nq, sh.grid)
				corpus := kernels.QuantF16(r, sh.rowHi*sh.dim)
				for row := sh.rowLo; row < sh.rowHi; row += 10 {
					corpus[row*sh.dim+r.IntN(sh.dim)] = 0x7e00 // NaN
				}
				q := kernels.QuantF16(r, kernels.QueryRows(ci, sh.nq)*sh.dim)
				theta := make([]uint32, sh.nq)
				for i := range theta {
					if i%2 == 1 {
						theta[i] = kernels.Key(float32(r.IntN(9)-4) / 2)
					}
				}
				cap := sh.rowHi - sh.rowLo + 1
				cand, count := poison(t, e, kernels.PairBytes*sh.nq*cap), put(t, e, make([]byte, 4*sh.nq))
				a := kernels.ScanArgs{Corpus: put(t, e, u16b(corpus)), Dim: sh.dim, RowLo: sh.rowLo, RowHi: sh.rowHi,
					Q: put(t, e, u16b(q)), NQ: sh.nq, Theta: put(t, e, kernels.U32Bytes(theta)), Cand: cand, Count: count, Cap: cap}
				l, err := kernels.ScanLaunch(ci, a, sh.grid)
				launch(t, e, l, err)
				wantC, wantN := make([]kernels.Pair, sh.nq*cap), make([]int32, sh.nq)
				kernels.ScanRef(kernels.ScanRefArgs{Corpus: kernels.WidenF16(corpus), Dim: sh.dim, RowLo: sh.rowLo, RowHi: sh.rowHi,
					Q: kernels.WidenF16(q), NQ: sh.nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
				sameSurvivors(t, what, sh.nq, cap, bpairs(get(t, e, cand, kernels.PairBytes*sh.nq*cap)), bi32(get(t, e, count, 4*sh.nq)), wantC, wantN)
			}
		}
	})
}

// TestScanI8Emu: rls_scan16_i8/64_i8/128_i8 over int8 codes (the
// conversion to fp16 in the fragments, the I8Perm order of the packed
// queries, the offsets added in the epilogue) on the shapes of
// TestScanEmu (dims multiples of 16, also ending inside a BK chunk),
// against ScanI8Ref.
func TestScanI8Emu(t *testing.T) {
	type shape struct{ dim, rowLo, rowHi, nq, grid int }
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(61, 2))
		for ci, sc := range kernels.ScanConfigs {
			if !sc.Int8 {
				continue
			}
			for _, sh := range []shape{{16, 0, 1, 1, 1}, {80, 5, 300, 3, 2}, {48, 0, 129, sc.BN + 1, 3}, {144, 200, 457, sc.BN/2 + 1, 1},
				{32, 0, 139, 2, 2}, {32, 0, 143, 2, 1}} {
				what := fmt.Sprintf("%s dim=%d rows=[%d,%d) nq=%d grid=%d", sc.Name, sh.dim, sh.rowLo, sh.rowHi, sh.nq, sh.grid)
				codes, packed, qoff, qs := kernels.I8Problem(t, r, ci, sh.rowHi, sh.dim, sh.nq)
				theta := make([]uint32, sh.nq)
				for i := range theta {
					if i%2 == 1 {
						theta[i] = kernels.Key(float32(r.IntN(9)-4) * 8)
					}
				}
				cap := sh.rowHi - sh.rowLo + 1
				cand, count := poison(t, e, kernels.PairBytes*sh.nq*cap), put(t, e, make([]byte, 4*sh.nq))
				a := kernels.ScanArgs{Corpus: put(t, e, kernels.I8Bytes(codes)), Dim: sh.dim, RowLo: sh.rowLo, RowHi: sh.rowHi,
					Q: put(t, e, u16b(packed)), QOff: put(t, e, f32b(qoff)), NQ: sh.nq, Theta: put(t, e, kernels.U32Bytes(theta)), Cand: cand, Count: count, Cap: cap}
				l, err := kernels.ScanLaunch(ci, a, sh.grid)
				launch(t, e, l, err)
				wantC, wantN := make([]kernels.Pair, sh.nq*cap), make([]int32, sh.nq)
				kernels.ScanI8Ref(kernels.ScanI8RefArgs{Codes: codes, Dim: sh.dim, RowLo: sh.rowLo, RowHi: sh.rowHi,
					Q: qs, QOff: qoff, NQ: sh.nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
				sameSurvivors(t, what, sh.nq, cap, bpairs(get(t, e, cand, kernels.PairBytes*sh.nq*cap)), bi32(get(t, e, count, 4*sh.nq)), wantC, wantN)
			}
		}
	})
}

// TestScanI8Refuses: the int8 launches refuse dims that are not a
// multiple of 16 and a missing offset vector.
func TestScanI8Refuses(t *testing.T) {
	ci := kernels.ScanFor(1, true)
	a := kernels.ScanArgs{Corpus: 1, Dim: 24, RowLo: 0, RowHi: 10, Q: 1, QOff: 1, NQ: 1, Theta: 1, Cand: 1, Count: 1, Cap: 10}
	if _, err := kernels.ScanLaunch(ci, a, 1); err == nil || !strings.Contains(err.Error(), "multiple of 16") {
		t.Errorf("dim 24: %v", err)
	}
	a.Dim, a.QOff = 32, 0
	if _, err := kernels.ScanLaunch(ci, a, 1); err == nil || !strings.Contains(err.Error(), "QOff") {
		t.Errorf("no offsets: %v", err)
	}
	if err := kernels.PackI8Queries(make([]uint16, 24), make([]float32, 1), make([]float32, 24), 1, 24, make([]float32, 24), make([]float32, 24)); err == nil {
		t.Error("PackI8Queries took dim 24")
	}
}

// TestScanEmuOverflow: survivors past cap are counted, not written.
func TestScanEmuOverflow(t *testing.T) {
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(43, 2))
		const dim, rows, nq, cap = 64, 300, 2, 7
		corpus, q := kernels.QuantF16(r, rows*dim), kernels.QuantF16(r, kernels.QueryRows(0, nq)*dim)
		cand, count := poison(t, e, kernels.PairBytes*nq*cap), put(t, e, make([]byte, 4*nq))
		l, err := kernels.ScanLaunch(0, kernels.ScanArgs{Corpus: put(t, e, u16b(corpus)), Dim: dim, RowLo: 0, RowHi: rows,
			Q: put(t, e, u16b(q)), NQ: nq, Theta: put(t, e, make([]byte, 4*nq)), Cand: cand, Count: count, Cap: cap}, 2)
		launch(t, e, l, err)
		wantC, wantN := make([]kernels.Pair, nq*cap), make([]int32, nq)
		kernels.ScanRef(kernels.ScanRefArgs{Corpus: kernels.WidenF16(corpus), Dim: dim, RowLo: 0, RowHi: rows, Q: kernels.WidenF16(q), NQ: nq,
			Theta: make([]uint32, nq), Cand: wantC, Count: wantN, Cap: cap})
		gotN := bi32(get(t, e, count, 4*nq))
		if !slices.Equal(gotN, wantN) || gotN[0] <= cap {
			t.Fatalf("counts %v, reference %v (cap %d)", gotN, wantN, cap)
		}
		for _, p := range bpairs(get(t, e, cand, kernels.PairBytes*nq*cap)) {
			if p.Row < 0 || p.Row >= rows || p.Key == 0 {
				t.Fatalf("slot below cap not a survivor: %+v", p)
			}
		}
	})
}

// TestFilterEmu: rls_filter over score tiles with random, tied and special
// (NaN, ±inf, ±0, subnormal) scores, against FilterRef.
func TestFilterEmu(t *testing.T) {
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(47, 2))
		for _, rows := range []int{1, 33, 300, 8193} {
			const nq, cap = 4, 9000
			ld := rows + 3
			scores := make([]float32, nq*ld)
			for qi, kind := range []string{"rand", "ties", "special", "rand"} {
				copy(scores[qi*ld:], kernels.GenScores(r, rows, kind))
			}
			// rare survivors; many; few; every non-NaN score (θ is 0 until a query has k)
			theta := []uint32{kernels.Key(2.5), kernels.Key(0.5), kernels.Key(0.75), 0}
			cand, count := poison(t, e, kernels.PairBytes*nq*cap), put(t, e, make([]byte, 4*nq))
			st := kernels.ScanState{Theta: put(t, e, kernels.U32Bytes(theta)), Cand: cand, Count: count, NQ: nq, Cap: cap}
			l, err := kernels.FilterLaunch(kernels.FilterArgs{Scores: put(t, e, f32b(scores)), LdS: int64(ld), Rows: rows, RowBase: 1000, NQ: nq}, st)
			launch(t, e, l, err)
			wantC, wantN := make([]kernels.Pair, nq*cap), make([]int32, nq)
			kernels.FilterRef(kernels.FilterRefArgs{Scores: scores, LdS: ld, Rows: rows, RowBase: 1000, NQ: nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
			sameSurvivors(t, fmt.Sprintf("filter rows=%d", rows), nq, cap, bpairs(get(t, e, cand, kernels.PairBytes*nq*cap)), bi32(get(t, e, count, 4*nq)), wantC, wantN)
		}
	})
}

// TestMergeEmu: rls_merge of sorted best lists (full, partly empty,
// empty) with survivors (none, some, past cap), k from 1 to KMax, against
// MergeRef: best lists, thresholds, counts and overflow flags.
func TestMergeEmu(t *testing.T) {
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(53, 2))
		for _, k := range []int{1, 10, 257, kernels.KMax} {
			const nq = 4
			cap := k + 40
			best := make([]kernels.Pair, nq*k)
			cand := make([]kernels.Pair, nq*cap)
			count := make([]int32, nq)
			rowsUsed := 0
			for q := 0; q < nq; q++ {
				fill := []int{k, k / 2, 0, k}[q]
				list := make([]kernels.Pair, 0, k)
				for i := 0; i < fill; i++ {
					list = append(list, kernels.Pair{Key: kernels.Key(float32(r.IntN(9)-4) / 4), Row: int32(rowsUsed)})
					rowsUsed++
				}
				kernels.SortPairs(list)
				for i := range k {
					best[q*k+i] = kernels.Pair{Key: 0, Row: -1}
					if i < len(list) {
						best[q*k+i] = list[i]
					}
				}
				count[q] = int32([]int{cap / 2, cap, 0, cap + 5}[q])
				for i := 0; i < min(int(count[q]), cap); i++ {
					cand[q*cap+i] = kernels.Pair{Key: kernels.Key(float32(r.IntN(9)-4) / 4), Row: int32(rowsUsed)}
					rowsUsed++
				}
			}
			theta, flags := make([]uint32, nq), make([]int32, nq)
			bb, cb := put(t, e, kernels.PairsBytes(best)), put(t, e, kernels.PairsBytes(cand))
			nb, tb, fb := put(t, e, i32b(count)), put(t, e, kernels.U32Bytes(theta)), put(t, e, i32b(flags))
			l, err := kernels.MergeLaunch(kernels.ScanState{Best: bb, Theta: tb, Count: nb, Flags: fb, Cand: cb, NQ: nq, K: k, Cap: cap})
			launch(t, e, l, err)
			if err := kernels.MergeRef(kernels.MergeRefArgs{Best: best, K: k, Cand: cand, Count: count, Cap: cap, Theta: theta, Flags: flags, NQ: nq}); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("merge k=%d", k)
			if got := bpairs(get(t, e, bb, kernels.PairBytes*nq*k)); !slices.Equal(got, best) {
				for i := range got {
					if got[i] != best[i] {
						t.Fatalf("%s: best[%d] = %+v, reference %+v", what, i, got[i], best[i])
					}
				}
			}
			if got := bu32(get(t, e, tb, 4*nq)); !slices.Equal(got, theta) {
				t.Fatalf("%s: thresholds %v, reference %v", what, got, theta)
			}
			if got := bi32(get(t, e, nb, 4*nq)); !slices.Equal(got, count) {
				t.Fatalf("%s: counts %v, reference %v", what, got, count)
			}
			if got := bi32(get(t, e, fb, 4*nq)); !slices.Equal(got, flags) {
				t.Fatalf("%s: flags %v, reference %v", what, got, flags)
			}
		}
	})
}

// TestScanPipelineEmu: the threshold pipeline as ann's fused path runs it
// (rls_scan_init, then rls_scan over ascending row spans each followed by
// rls_merge) gives the exact top-k, ties by ascending row, at k from 1 to
// past 256, over an fp16 corpus and over an int8 one.
func TestScanPipelineEmu(t *testing.T) {
	emuModes(t, func(t *testing.T, e *kernelemu.Emu) {
		r := rand.New(rand.NewPCG(59, 2))
		const n, dim, nq = 2000, 48, 5
		for _, int8 := range []bool{false, true} {
			ci := kernels.ScanFor(nq, int8)
			var db, qb, ob cuda.DevPtr
			var score func(row, qi int) float32
			if int8 {
				codes, packed, qoff, qs := kernels.I8Problem(t, r, ci, n, dim, nq)
				db, qb, ob = put(t, e, kernels.I8Bytes(codes)), put(t, e, u16b(packed)), put(t, e, f32b(qoff))
				score = func(row, qi int) float32 {
					var s float32
					for j := 0; j < dim; j++ {
						s += float32(codes[row*dim+j]) * qs[qi*dim+j]
					}
					return s + qoff[qi]
				}
			} else {
				corpus, q := kernels.QuantF16(r, n*dim), kernels.QuantF16(r, kernels.QueryRows(ci, nq)*dim)
				db, qb = put(t, e, u16b(corpus)), put(t, e, u16b(q))
				cf, qf := kernels.WidenF16(corpus), kernels.WidenF16(q)
				score = func(row, qi int) float32 {
					var s float32
					for j := 0; j < dim; j++ {
						s += cf[row*dim+j] * qf[qi*dim+j]
					}
					return s
				}
			}
			for _, k := range []int{1, 10, 257} {
				cap := 1500
				st := kernels.ScanState{Best: poison(t, e, kernels.PairBytes*nq*k), Theta: poison(t, e, 4*nq), Count: poison(t, e, 4*nq),
					Flags: poison(t, e, 4*nq), Cand: poison(t, e, kernels.PairBytes*nq*cap), NQ: nq, K: k, Cap: cap}
				l, err := kernels.ScanInitLaunch(st)
				launch(t, e, l, err)
				for lo, hi := 0, 700; lo < n; lo, hi = hi, min(n, hi+300+r.IntN(500)) {
					l, err := kernels.ScanLaunch(ci, kernels.ScanArgs{Corpus: db, Dim: dim, RowLo: lo, RowHi: hi, Q: qb, QOff: ob, NQ: nq,
						Theta: st.Theta, Cand: st.Cand, Count: st.Count, Cap: cap}, 3)
					launch(t, e, l, err)
					l, err = kernels.MergeLaunch(st)
					launch(t, e, l, err)
				}
				got := bpairs(get(t, e, st.Best, kernels.PairBytes*nq*k))
				flags := bi32(get(t, e, st.Flags, 4*nq))
				for qi := 0; qi < nq; qi++ {
					if flags[qi] != 0 {
						t.Fatalf("int8=%v k=%d q%d: overflow flagged", int8, k, qi)
					}
					all := make([]kernels.Pair, 0, n)
					for row := 0; row < n; row++ {
						if key := kernels.Key(score(row, qi)); key != 0 {
							all = append(all, kernels.Pair{Key: key, Row: int32(row)})
						}
					}
					kernels.SortPairs(all)
					for i, w := range all[:k] {
						if g := got[qi*k+i]; g != w {
							t.Fatalf("int8=%v k=%d q%d rank %d: emulated (%d, %v), exact (%d, %v)", int8, k, qi, i, g.Row, kernels.Unkey(g.Key), w.Row, kernels.Unkey(w.Key))
						}
					}
				}
			}
		}
	})
}

// TestScanEmuCatches: the emulator fails what a GPU would get wrong in
// these kernels: too little dynamic shared memory for the pipeline.
func TestScanEmuCatches(t *testing.T) {
	e := kernelemu.Open(t)
	const dim, rows, nq = 64, 1000, 1 // 8 tiles: every pipeline stage is filled
	a := kernels.ScanArgs{Corpus: put(t, e, make([]byte, 2*rows*dim)), Dim: dim, RowLo: 0, RowHi: rows, Q: put(t, e, make([]byte, 2*16*dim)),
		NQ: nq, Theta: put(t, e, make([]byte, 4)), Cand: poison(t, e, 8*rows), Count: put(t, e, make([]byte, 4)), Cap: rows}
	l, err := kernels.ScanLaunch(0, a, 1)
	if err != nil {
		t.Fatal(err)
	}
	l.Shared /= 2
	if err := e.Launch(l); err == nil || !strings.Contains(err.Error(), "shared") {
		t.Fatalf("a scan with half its shared memory ran: %v", err)
	}
	bad := kernels.Launch{Kernel: "rls_merge", Grid: cuda.Dim3{X: 1, Y: 1, Z: 1}, Block: cuda.Dim3{X: 32, Y: 1, Z: 1}, Args: []any{a.Cand}}
	if err := e.Launch(bad); err == nil {
		t.Fatal("a launch with too few arguments ran")
	}
}
