package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/x448/float16"
)

// This file replays scan.cu's kernels on the CPU with the kernels' own
// index arithmetic, so that CI checks what a GPU would otherwise be the
// only judge of: the cp.async chunk mapping and its swizzle, the ldmatrix
// lane addresses, the mma.sync m16n8k16 fragment layouts (PTX ISA,
// "Matrix Fragments for mma.m16n8k16"), the epilogue's (row, query)
// mapping and survivor compaction, the persistent work schedule and the
// cp.async pipeline's stage bookkeeping, and rls_merge's and rls_filter's
// selection logic. Each sim* function transcribes one kernel; keep them in
// step with scan.cu.

// simSwz is scan.cu's swz<CPR>.
func simSwz(cpr, r, c int) int {
	sh := 1
	if cpr == 8 {
		sh = 0
	}
	return r*cpr + (c ^ ((r >> sh) & (cpr - 1)))
}

// simCfg holds ScanCfg's derived constants.
type simCfg struct {
	ScanConfig
	BM, NT, WTM, WTN, MI, NI, CPR, KS, AChunks, BChunks, ABytes, StageBytes, RS int
}

func newSimCfg(c ScanConfig) simCfg {
	s := simCfg{ScanConfig: c, BM: ScanBM}
	s.NT = c.WM * c.WN * 32
	s.WTM, s.WTN = s.BM/c.WM, c.BN/c.WN
	s.MI, s.NI = s.WTM/16, s.WTN/8
	s.CPR = c.BK / 8
	s.KS = c.BK / 16
	s.AChunks, s.BChunks = s.BM*s.CPR, c.BN*s.CPR
	s.ABytes = s.BM * c.BK * 2
	s.StageBytes = (s.BM + c.BN) * c.BK * 2
	s.RS = s.NT / s.CPR
	return s
}

// scanProblem is one rls_scan launch on host data: fp16 bits.
type scanProblem struct {
	dim, rowLo, rowHi, nq, cap int
	corpus                     []uint16 // [rows, dim]
	q                          []uint16 // [QueryRows, dim]
	theta                      []uint32
}

// simLoad is load_next for one (work item, dim chunk) into stage bytes st;
// written counts the bytes each 16-byte slot received (every slot exactly
// once per step).
func simLoad(c simCfg, p *scanProblem, st []byte, written []int, rt, qb, kt int) {
	for tid := 0; tid < c.NT; tid++ {
		lr, lc := tid/c.CPR, tid%c.CPR
		ldst := simSwz(c.CPR, lr, lc) * 16
		kc := kt*c.BK + lc*8
		kok := kc < p.dim
		row0 := p.rowLo + rt*c.BM + lr
		put := func(dst int, src []uint16) {
			written[dst/16]++
			for e := 0; e < 8; e++ {
				var v uint16
				if src != nil {
					v = src[e]
				}
				binary.LittleEndian.PutUint16(st[dst+2*e:], v)
			}
		}
		for j := 0; j < c.AChunks/c.NT; j++ {
			ok := kok && row0+j*c.RS < p.rowHi
			var src []uint16
			if ok {
				off := (row0+j*c.RS)*p.dim + kc
				src = p.corpus[off : off+8]
			}
			put(ldst+j*c.RS*c.CPR*16, src)
		}
		for j := 0; j < (c.BChunks+c.NT-1)/c.NT; j++ {
			if c.BChunks%c.NT == 0 || tid+j*c.NT < c.BChunks {
				var src []uint16
				if kok {
					off := (qb*c.BN+lr+j*c.RS)*p.dim + kc
					src = p.q[off : off+8]
				}
				put(c.ABytes+ldst+j*c.RS*c.CPR*16, src)
			}
		}
	}
}

// simLdmatrix is ldmatrix.x4: lane L gives the row address of matrix L/8,
// row L%8; lane L receives, from each matrix i, the two fp16 at row L/4,
// columns 2·(L%4) and +1 (one 32-bit register, the lower column in the
// low half).
func simLdmatrix(st []byte, addr [32]int) (reg [32][4]uint32) {
	for L := 0; L < 32; L++ {
		for i := 0; i < 4; i++ {
			a := addr[8*i+L/4] + (L%4)*4
			reg[L][i] = binary.LittleEndian.Uint32(st[a:])
		}
	}
	return reg
}

func h2f(bits uint16) float64 { return float64(float16.Frombits(bits).Float32()) }

// simMMA is mma.sync.m16n8k16.row.col.f32.f16.f16.f32 with the PTX
// fragment layouts (g = lane/4, t = lane%4): A a0 (g, 2t..2t+1), a1 (g+8,
// 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..); B b0 (k 2t..2t+1, n g), b1 (k
// 2t+8.., n g); C c0..c1 (g, 2t..2t+1), c2..c3 (g+8, 2t..).
func simMMA(acc *[32][4]float64, a [32][4]uint32, b [32][2]uint32) {
	var A [16][16]float64
	var B [16][8]float64
	for L := 0; L < 32; L++ {
		g, t := L/4, L%4
		for e := 0; e < 2; e++ {
			A[g][2*t+e] = h2f(uint16(a[L][0] >> (16 * e)))
			A[g+8][2*t+e] = h2f(uint16(a[L][1] >> (16 * e)))
			A[g][2*t+8+e] = h2f(uint16(a[L][2] >> (16 * e)))
			A[g+8][2*t+8+e] = h2f(uint16(a[L][3] >> (16 * e)))
			B[2*t+e][g] = h2f(uint16(b[L][0] >> (16 * e)))
			B[2*t+8+e][g] = h2f(uint16(b[L][1] >> (16 * e)))
		}
	}
	for L := 0; L < 32; L++ {
		g, t := L/4, L%4
		for r := 0; r < 4; r++ {
			row, col := g+(r>>1)*8, 2*t+(r&1)
			s := 0.0
			for k := 0; k < 16; k++ {
				s += A[row][k] * B[k][col]
			}
			acc[L][r] += s
		}
	}
}

// simWorkAcc computes one work item's accumulators the way the kernel
// does: acc[warp][mi][ni][lane][r].
func simWorkAcc(t *testing.T, c simCfg, p *scanProblem, rt, qb int) [][][][32][4]float64 {
	nw := c.WM * c.WN
	acc := make([][][][32][4]float64, nw)
	for w := range acc {
		acc[w] = make([][][32][4]float64, c.MI)
		for mi := range acc[w] {
			acc[w][mi] = make([][32][4]float64, c.NI)
		}
	}
	kt := (p.dim + c.BK - 1) / c.BK
	st := make([]byte, c.StageBytes)
	written := make([]int, c.StageBytes/16)
	for k := 0; k < kt; k++ {
		clear(written)
		for i := range st {
			st[i] = 0xAA // poison: a slot no chunk wrote decodes as a large fp16
		}
		simLoad(c, p, st, written, rt, qb, k)
		for i, n := range written {
			if n != 1 {
				t.Fatalf("%s: stage slot %d written %d times in one step", c.Name, i, n)
			}
		}
		for warp := 0; warp < nw; warp++ {
			wm, wn := warp%c.WM, warp/c.WM
			for kk := 0; kk < c.KS; kk++ {
				var aOff, bOff [32]int
				for lane := 0; lane < 32; lane++ {
					aOff[lane] = simSwz(c.CPR, wm*c.WTM+(lane&15), kk*2+(lane>>4)) * 16
					bOff[lane] = simSwz(c.CPR, wn*c.WTN+(lane&7)+((lane>>4)<<3), kk*2+((lane>>3)&1))*16 + c.ABytes
				}
				af := make([][32][4]uint32, c.MI)
				for mi := 0; mi < c.MI; mi++ {
					var addr [32]int
					for lane := range addr {
						addr[lane] = aOff[lane] + mi*16*c.CPR*16
					}
					af[mi] = simLdmatrix(st, addr)
				}
				bf := make([][32][2]uint32, c.NI)
				for nj := 0; nj < c.NI/2; nj++ {
					var addr [32]int
					for lane := range addr {
						addr[lane] = bOff[lane] + nj*16*c.CPR*16
					}
					r := simLdmatrix(st, addr)
					for lane := 0; lane < 32; lane++ {
						bf[2*nj][lane] = [2]uint32{r[lane][0], r[lane][1]}
						bf[2*nj+1][lane] = [2]uint32{r[lane][2], r[lane][3]}
					}
				}
				for mi := 0; mi < c.MI; mi++ {
					for ni := 0; ni < c.NI; ni++ {
						simMMA(&acc[warp][mi][ni], af[mi], bf[ni])
					}
				}
			}
		}
	}
	return acc
}

// simEpilogue is the epilogue of one work item: thresholds per column,
// the warp's any-vote, per (lane, column) one atomicAdd reserving its
// survivors, written in (mi, h) order. Lanes run in order, warps in order
// (one legal interleaving of the atomics).
func simEpilogue(c simCfg, p *scanProblem, acc [][][][32][4]float64, rt, qb int, cand []Pair, count []int32) {
	for warp := 0; warp < c.WM*c.WN; warp++ {
		wm, wn := warp%c.WM, warp/c.WM
		key := func(lane, mi, ni, r int) (uint32, int) {
			g := lane >> 2
			row := p.rowLo + rt*c.BM + wm*c.WTM + g + mi*16 + (r>>1)*8
			if row >= p.rowHi {
				return 0, row
			}
			return Key(float32(acc[warp][mi][ni][lane][r])), row
		}
		th := func(lane, ni, pp int) (uint32, int) {
			qq := qb*c.BN + wn*c.WTN + (lane&3)*2 + ni*8 + pp
			if qq < p.nq {
				return p.theta[qq], qq
			}
			return 0xffffffff, qq
		}
		any := false
		for lane := 0; lane < 32; lane++ {
			for mi := 0; mi < c.MI; mi++ {
				for ni := 0; ni < c.NI; ni++ {
					for r := 0; r < 4; r++ {
						k, _ := key(lane, mi, ni, r)
						tv, _ := th(lane, ni, r&1)
						any = any || k > tv
					}
				}
			}
		}
		if !any {
			continue
		}
		for lane := 0; lane < 32; lane++ {
			for ni := 0; ni < c.NI; ni++ {
				for pp := 0; pp < 2; pp++ {
					tv, qq := th(lane, ni, pp)
					n := 0
					for mi := 0; mi < c.MI; mi++ {
						for h := 0; h < 2; h++ {
							if k, _ := key(lane, mi, ni, 2*h+pp); k > tv {
								n++
							}
						}
					}
					if n == 0 {
						continue
					}
					pos := int(count[qq])
					count[qq] += int32(n)
					for mi := 0; mi < c.MI; mi++ {
						for h := 0; h < 2; h++ {
							if k, row := key(lane, mi, ni, 2*h+pp); k > tv {
								if pos < p.cap {
									cand[qq*p.cap+pos] = Pair{k, int32(row)}
								}
								pos++
							}
						}
					}
				}
			}
		}
	}
}

// simScanSchedule replays the persistent loop's counters for one CTA:
// the work items it takes, and that every step's stage is loaded before
// it is consumed and not overwritten until consumed (cp.async.wait_group
// STAGES-2 after STAGES-1 prologue commits).
func simScanSchedule(t *testing.T, c simCfg, nWork, kt, grid, block int) []int {
	myWork := 0
	if block < nWork {
		myWork = (nWork-1-block)/grid + 1
	}
	total := myWork * kt
	type slot struct{ step int }
	stages := make([]slot, c.Stages)
	for i := range stages {
		stages[i].step = -1
	}
	var works []int
	lj, lkt, ls, lstage := 0, 0, 0, 0
	committed := 0
	load := func() {
		if ls < total {
			w := block + lj*grid
			if lkt == 0 {
				works = append(works, w)
			}
			stages[lstage].step = ls
			if lkt++; lkt == kt {
				lkt, lj = 0, lj+1
			}
		}
		ls++
		if lstage++; lstage == c.Stages {
			lstage = 0
		}
		committed++
	}
	for s := 0; s < c.Stages-1; s++ {
		load()
	}
	cj, ckt, cstage := 0, 0, 0
	for s := 0; s < total; s++ {
		// wait_group(STAGES-2): groups 0..committed-(STAGES-2)-1 are complete.
		if complete := committed - (c.Stages - 2); complete < s+1 {
			t.Fatalf("%s: step %d consumed with only %d groups complete", c.Name, s, complete)
		}
		before := stages[cstage].step
		load()
		if stages[cstage].step != s || before != s {
			t.Fatalf("%s: step %d reads stage %d holding step %d (was %d)", c.Name, s, cstage, stages[cstage].step, before)
		}
		if cstage++; cstage == c.Stages {
			cstage = 0
		}
		if ckt++; ckt < kt {
			continue
		}
		ckt = 0
		if w := block + cj*grid; w != works[cj] {
			t.Fatalf("%s: epilogue of work %d, loads were for %d", c.Name, w, works[cj])
		}
		cj++
	}
	if cj != myWork {
		t.Fatalf("%s: block %d finished %d of %d work items", c.Name, block, cj, myWork)
	}
	return works
}

// simScan runs a whole rls_scan launch (grid CTAs) and returns the
// survivors and counts.
func simScan(t *testing.T, c simCfg, p *scanProblem, grid int) ([]Pair, []int32) {
	nTiles := (p.rowHi - p.rowLo + c.BM - 1) / c.BM
	nQB := (p.nq + c.BN - 1) / c.BN
	nWork := nTiles * nQB
	kt := (p.dim + c.BK - 1) / c.BK
	cand := make([]Pair, p.nq*p.cap)
	count := make([]int32, p.nq)
	seen := make([]int, nWork)
	for b := 0; b < grid; b++ {
		for _, w := range simScanSchedule(t, c, nWork, kt, grid, b) {
			seen[w]++
			rt, qb := w/nQB, w%nQB
			acc := simWorkAcc(t, c, p, rt, qb)
			checkTile(t, c, p, acc, rt, qb)
			simEpilogue(c, p, acc, rt, qb, cand, count)
		}
	}
	for w, n := range seen {
		if n != 1 {
			t.Fatalf("%s: work item %d done %d times", c.Name, w, n)
		}
	}
	return cand, count
}

// checkTile: every accumulator equals the exact dot product of its (row,
// query), computed directly (data are small multiples of 1/2, so every
// order of summation is exact).
func checkTile(t *testing.T, c simCfg, p *scanProblem, acc [][][][32][4]float64, rt, qb int) {
	t.Helper()
	for warp := 0; warp < c.WM*c.WN; warp++ {
		wm, wn := warp%c.WM, warp/c.WM
		for mi := 0; mi < c.MI; mi++ {
			for ni := 0; ni < c.NI; ni++ {
				for lane := 0; lane < 32; lane++ {
					for r := 0; r < 4; r++ {
						row := p.rowLo + rt*c.BM + wm*c.WTM + (lane >> 2) + mi*16 + (r>>1)*8
						qq := qb*c.BN + wn*c.WTN + (lane&3)*2 + ni*8 + (r & 1)
						want := 0.0
						if row < p.rowHi {
							for j := 0; j < p.dim; j++ {
								want += h2f(p.corpus[row*p.dim+j]) * h2f(p.q[qq*p.dim+j])
							}
						}
						if got := acc[warp][mi][ni][lane][r]; got != want {
							t.Fatalf("%s: warp %d mi %d ni %d lane %d r %d = (row %d, query %d): %v, want %v", c.Name, warp, mi, ni, lane, r, row, qq, got, want)
						}
					}
				}
			}
		}
	}
}

func quantF16(r *rand.Rand, n int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = float16.Fromfloat32(float32(r.IntN(5)-2) / 2).Bits()
	}
	return v
}

func widen(h []uint16) []float32 {
	f := make([]float32, len(h))
	for i, b := range h {
		f[i] = float16.Frombits(b).Float32()
	}
	return f
}

// survivorsEqual compares the first min(count, cap) survivors of each
// query as sets, and the counts.
func survivorsEqual(t *testing.T, what string, nq, cap int, gotC []Pair, gotN []int32, wantC []Pair, wantN []int32) {
	t.Helper()
	for q := 0; q < nq; q++ {
		if gotN[q] != wantN[q] {
			t.Fatalf("%s: query %d count %d, reference %d", what, q, gotN[q], wantN[q])
		}
		n := min(int(gotN[q]), cap)
		g := slices.Clone(gotC[q*cap : q*cap+n])
		w := slices.Clone(wantC[q*cap : q*cap+n])
		SortPairs(g)
		SortPairs(w)
		if int(gotN[q]) <= cap && !slices.Equal(g, w) {
			t.Fatalf("%s: query %d survivors %v, reference %v", what, q, g, w)
		}
	}
}

// TestScanKernelSim replays each rls_scan configuration over awkward
// shapes (rows not a multiple of 128, nq not a multiple of BN, dims that
// leave a partial BK chunk, a row range starting inside the share) and
// thresholds that keep some scores, and compares every score of every
// tile and the survivors with ScanRef.
func TestScanKernelSim(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	type shape struct{ dim, rowLo, rowHi, nq, grid int }
	shapes := []shape{{8, 0, 1, 1, 1}, {72, 5, 300, 3, 2}, {40, 0, 129, 17, 3}, {64, 128, 384, 16, 5}}
	if !testing.Short() {
		shapes = append(shapes, shape{136, 3, 260, 130, 4})
	}
	for ci, sc := range ScanConfigs {
		if sc.Int8 {
			continue // the emulator runs the int8 kernels' source (TestScanI8Emu)
		}
		c := newSimCfg(sc)
		for _, sh := range shapes {
			t.Run(fmt.Sprintf("%s/dim=%d/rows=[%d,%d)/nq=%d/grid=%d", sc.Name, sh.dim, sh.rowLo, sh.rowHi, sh.nq, sh.grid), func(t *testing.T) {
				p := &scanProblem{dim: sh.dim, rowLo: sh.rowLo, rowHi: sh.rowHi, nq: sh.nq, cap: 50}
				p.corpus = quantF16(r, sh.rowHi*sh.dim)
				p.q = quantF16(r, QueryRows(ci, sh.nq)*sh.dim)
				p.theta = make([]uint32, sh.nq)
				for q := range p.theta {
					switch q % 3 {
					case 0: // keep every non-NaN score (the first span)
					case 1:
						p.theta[q] = Key(1)
					default:
						p.theta[q] = Key(float32(r.IntN(9)-4) / 4)
					}
				}
				gotC, gotN := simScan(t, c, p, sh.grid)
				wantC := make([]Pair, sh.nq*p.cap)
				wantN := make([]int32, sh.nq)
				ScanRef(ScanRefArgs{Corpus: widen(p.corpus), Dim: sh.dim, RowLo: sh.rowLo, RowHi: sh.rowHi, Q: widen(p.q), NQ: sh.nq,
					Theta: p.theta, Cand: wantC, Count: wantN, Cap: p.cap})
				survivorsEqual(t, sc.Name, sh.nq, p.cap, gotC, gotN, wantC, wantN)
			})
		}
	}
}

// TestScanSwizzleConflictFree: the 8 row addresses of every ldmatrix
// phase, and the 8 chunks of every quarter-warp of cp.async stores, fall
// in 8 different 16-byte bank groups (else shared memory serialises).
func TestScanSwizzleConflictFree(t *testing.T) {
	for _, sc := range ScanConfigs {
		c := newSimCfg(sc)
		groups := func(addrs []int) bool {
			seen := map[int]bool{}
			for _, a := range addrs {
				seen[(a/16)%8] = true
			}
			return len(seen) == len(addrs)
		}
		for warp := 0; warp < c.WM*c.WN; warp++ {
			wm, wn := warp%c.WM, warp/c.WM
			for kk := 0; kk < c.KS; kk++ {
				for i := 0; i < 4; i++ {
					var a, b []int
					for j := 0; j < 8; j++ {
						lane := 8*i + j
						if sc.Int8 { // int8 corpus rows: 64 bytes, lane = row of a 32-row block, chunk kk
							a = append(a, simSwz(c.BK/16, wm*c.WTM+lane, kk)*16)
						} else {
							a = append(a, simSwz(c.CPR, wm*c.WTM+(lane&15), kk*2+(lane>>4))*16)
						}
						b = append(b, simSwz(c.CPR, wn*c.WTN+(lane&7)+((lane>>4)<<3), kk*2+((lane>>3)&1))*16)
					}
					if !groups(a) || !groups(b) {
						t.Fatalf("%s warp %d kk %d matrix %d: ldmatrix rows share bank groups: A %v B %v", sc.Name, warp, kk, i, a, b)
					}
				}
			}
		}
		for q := 0; q < c.NT/8; q++ {
			var a []int
			for tid := 8 * q; tid < 8*q+8; tid++ {
				a = append(a, simSwz(c.CPR, tid/c.CPR, tid%c.CPR)*16)
			}
			if !groups(a) {
				t.Fatalf("%s: cp.async quarter-warp %d stores share bank groups: %v", sc.Name, q, a)
			}
			if sc.Int8 {
				cpra := c.BK / 16
				var a8 []int
				for tid := 8 * q; tid < 8*q+8; tid++ {
					a8 = append(a8, simSwz(cpra, tid/cpra, tid%cpra)*16)
				}
				if !groups(a8) {
					t.Fatalf("%s: int8 cp.async quarter-warp %d stores share bank groups: %v", sc.Name, q, a8)
				}
			}
		}
	}
}

// TestScanConfigsMatchSource: ScanConfigs equals scan.cu's typedefs and
// launch bounds, and the PTX declares each kernel's block size.
func TestScanConfigsMatchSource(t *testing.T) {
	src, err := os.ReadFile("scan.cu")
	if err != nil {
		t.Fatal(err)
	}
	typedef := regexp.MustCompile(`typedef ScanCfg<(\d+), (\d+), (\d+), (\d+), (\d+)(, true)?> Scan(\d+)(I8)?;`)
	bounds := regexp.MustCompile(`__launch_bounds__\(Scan(\d+)(I8)?::NT, (\d+)\) (rls_scan\w+)\(`)
	got := map[string]ScanConfig{}
	for _, m := range typedef.FindAllStringSubmatch(string(src), -1) {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		if (m[6] != "") != (m[8] != "") {
			t.Fatalf("typedef %s: the I8 name and the int8 flag disagree", m[0])
		}
		name := "rls_scan" + m[7]
		if m[8] != "" {
			name += "_i8"
		}
		got[name] = ScanConfig{Name: name, BN: n(1), BK: n(2), WM: n(3), WN: n(4), Stages: n(5), Int8: m[6] != ""}
	}
	for _, m := range bounds.FindAllStringSubmatch(string(src), -1) {
		want := "rls_scan" + m[1]
		if m[2] != "" {
			want += "_i8"
		}
		if m[4] != want {
			t.Errorf("%s is bounded by Scan%s%s", m[4], m[1], m[2])
		}
		c := got[m[4]]
		c.MinBlocks, _ = strconv.Atoi(m[3])
		got[m[4]] = c
	}
	if len(got) != len(ScanConfigs) {
		t.Errorf("scan.cu has %d scan typedefs, ScanConfigs %d", len(got), len(ScanConfigs))
	}
	for _, want := range ScanConfigs {
		if got[want.Name] != want {
			t.Errorf("%s: scan.cu says %+v, ScanConfigs %+v", want.Name, got[want.Name], want)
		}
		if want.SharedBytes() > 227<<10 {
			t.Errorf("%s: %d bytes of shared memory exceed an H100/H200 block's 227 KiB", want.Name, want.SharedBytes())
		}
	}
	for _, img := range [][]byte{scanPTXSM80, scanPTXSM90} {
		for _, c := range ScanConfigs {
			re := regexp.MustCompile(`\.entry ` + c.Name + `\([^)]*\)\s*\.maxntid (\d+), 1, 1\s*\.minnctapersm (\d+)`)
			m := re.FindSubmatch(img)
			if m == nil {
				t.Fatalf("PTX lacks %s's .maxntid/.minnctapersm", c.Name)
			}
			if string(m[1]) != strconv.Itoa(c.Threads()) || string(m[2]) != strconv.Itoa(c.MinBlocks) {
				t.Errorf("%s: PTX .maxntid %s .minnctapersm %s, want %d, %d", c.Name, m[1], m[2], c.Threads(), c.MinBlocks)
			}
		}
	}
}

// TestNoSpills reads the ptxas report `make kernels` commits
// (resources_sm90.txt): no kernel may use a stack frame or spill (a spill
// inside the scan's main loop would put its accumulators in local memory).
func TestNoSpills(t *testing.T) {
	b, err := os.ReadFile("resources_sm90.txt")
	if err != nil {
		t.Fatal(err)
	}
	fn := ""
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile(`Function properties for (\w+)`).FindStringSubmatch(line); m != nil {
			fn = m[1]
			continue
		}
		if strings.Contains(line, "bytes stack frame") {
			n++
			if !strings.HasPrefix(line, "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads") {
				t.Errorf("%s: %s", fn, line)
			}
		}
	}
	if n < 9 {
		t.Fatalf("resources_sm90.txt reports %d kernels, want the 9 of scan.cu", n)
	}
}

// simFilter replays rls_filter: per (block, query) the grid-stride rounds
// of one 32-score window per warp, the ballot, one atomicAdd per window
// with survivors, positions by popcount of the lower lanes.
func simFilter(scores []float32, ldS, rows, rowBase, nq int, theta []uint32, cand []Pair, count []int32, cap, blocks int) {
	stride := blocks * FilterThreads
	end := (rows + 31) &^ 31
	for qi := 0; qi < nq; qi++ {
		for b := 0; b < blocks; b++ {
			for warp := 0; warp < FilterThreads/32; warp++ {
				for i0 := b*FilterThreads + warp*32; i0 < end; i0 += stride {
					var ballot uint32
					var keys [32]uint32
					for lane := 0; lane < 32; lane++ {
						if i := i0 + lane; i < rows {
							keys[lane] = Key(scores[qi*ldS+i])
						}
						if keys[lane] > theta[qi] {
							ballot |= 1 << lane
						}
					}
					if ballot == 0 {
						continue
					}
					base := int(count[qi])
					count[qi] += int32(popcount(ballot))
					for lane := 0; lane < 32; lane++ {
						if ballot&(1<<lane) != 0 {
							if pos := base + popcount(ballot&(1<<lane-1)); pos < cap {
								cand[qi*cap+pos] = Pair{keys[lane], int32(rowBase + i0 + lane)}
							}
						}
					}
				}
			}
		}
	}
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestFilterKernelSim(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	for _, kind := range []string{"rand", "ties", "special"} {
		for _, rows := range []int{1, 31, 33, 8192, 8193, 70000} {
			t.Run(fmt.Sprintf("%s/rows=%d", kind, rows), func(t *testing.T) {
				const nq, cap = 3, 600
				ld := rows + 3
				scores := make([]float32, nq*ld)
				for q := 0; q < nq; q++ {
					copy(scores[q*ld:], genScores(r, rows, kind))
				}
				theta := []uint32{0, Key(0.5), Key(2)}
				gc, gn := make([]Pair, nq*cap), make([]int32, nq)
				simFilter(scores, ld, rows, 1000, nq, theta, gc, gn, cap, FilterBlocks(rows))
				wc, wn := make([]Pair, nq*cap), make([]int32, nq)
				FilterRef(FilterRefArgs{Scores: scores, LdS: ld, Rows: rows, RowBase: 1000, NQ: nq, Theta: theta, Cand: wc, Count: wn, Cap: cap})
				survivorsEqual(t, "filter", nq, cap, gc, gn, wc, wn)
			})
		}
	}
}

// simMerge replays rls_merge for one query: composites key<<32 | ^row
// (0 = empty), the valid count, radix passes of 8 bits from the top with
// the early exit when the chosen bin holds exactly the entries still
// wanted, the gather of (c & mask) ≥ prefix, the descending sort, the
// write-back, theta, count and flag. It returns how many radix passes ran.
func simMerge(best []Pair, k int, cand []Pair, count *int32, cap int, theta *uint32, flags *int32) int {
	raw := int(*count)
	if raw == 0 {
		return 0
	}
	nc := min(raw, cap)
	L := k + nc
	comp := func(i int) uint64 {
		var e Pair
		if i < k {
			e = best[i]
			if e.Row < 0 {
				return 0
			}
		} else {
			e = cand[i-k]
		}
		return uint64(e.Key)<<32 | uint64(^uint32(e.Row))
	}
	valid := 0
	for i := 0; i < L; i++ {
		if comp(i) != 0 {
			valid++
		}
	}
	want := min(k, valid)
	var prefix, mask uint64
	remaining, passes := want, 0
	for shift := 56; shift >= 0 && want > 0; shift -= 8 {
		passes++
		var hist [256]int
		for i := 0; i < L; i++ {
			if c := comp(i); c != 0 && c&mask == prefix {
				hist[(c>>shift)&255]++
			}
		}
		cum, bin := 0, 0
		for b := 255; b >= 0; b-- {
			if h := hist[b]; cum+h >= remaining {
				prefix |= uint64(b) << shift
				remaining -= cum
				bin = h
				break
			} else {
				cum += h
			}
		}
		mask |= 0xff << shift
		if bin == remaining {
			break
		}
	}
	var sk []uint64
	if want > 0 {
		for i := 0; i < L; i++ {
			if c := comp(i); c != 0 && c&mask >= prefix {
				sk = append(sk, c)
			}
		}
	}
	slices.Sort(sk)
	slices.Reverse(sk)
	for i := 0; i < k; i++ {
		if i < want {
			best[i] = Pair{uint32(sk[i] >> 32), int32(^uint32(sk[i]))}
		} else {
			best[i] = Pair{0, -1}
		}
	}
	*theta = 0
	if want == k {
		*theta = uint32(sk[k-1] >> 32)
	}
	*count = 0
	if raw > cap {
		*flags |= 1
	}
	if len(sk) != want {
		panic(fmt.Sprintf("gathered %d, want %d", len(sk), want))
	}
	return passes
}

// TestMergeKernelSim: the replay of rls_merge equals MergeRef on lists with
// distinct keys (early exit after the key bytes), equal keys (the row bytes
// decide), empty best slots, fewer entries than k, and overflow; and both
// early-exit and full-depth selections occur.
func TestMergeKernelSim(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 1))
	passes := map[int]bool{}
	for _, kind := range []string{"rand", "ties", "special"} {
		for _, k := range []int{1, 2, 10, 100, 256, 257, 2048} {
			for _, nc := range []int{0, 1, 5, 300, 3000} {
				for _, over := range []bool{false, true} {
					const cap = 2500
					rows := r.Perm(20000)
					best := make([]Pair, k)
					nb := r.IntN(k + 1)
					for i := range best {
						best[i] = Pair{0, -1}
					}
					for i := 0; i < nb; i++ {
						best[i] = Pair{Key(genScores(r, 1, kind)[0]), int32(rows[i])}
					}
					// keys of NaN never reach a list: drop them
					bb := best[:0:0]
					for _, e := range best[:nb] {
						if e.Key != 0 {
							bb = append(bb, e)
						}
					}
					SortPairs(bb)
					for i := range best {
						best[i] = Pair{0, -1}
					}
					copy(best, bb)
					cand := make([]Pair, cap)
					n := 0
					for _, s := range genScores(r, nc, kind) {
						if kk := Key(s); kk != 0 && n < cap {
							cand[n] = Pair{kk, int32(rows[k+n])}
							n++
						}
					}
					raw := int32(n)
					if over {
						raw = int32(cap + 7)
						for ; n < cap; n++ {
							cand[n] = Pair{Key(float32(r.NormFloat64())), int32(rows[k+n])}
						}
					}
					wb := slices.Clone(best)
					th, fl, ct := []uint32{0}, []int32{0}, []int32{raw}
					if err := MergeRef(MergeRefArgs{Best: wb, K: k, Cand: cand, Count: ct, Cap: cap, Theta: th, Flags: fl, NQ: 1}); err != nil {
						t.Fatal(err)
					}
					wt, wf, wc := th[0], fl[0], ct[0]
					gb, gc := slices.Clone(best), raw
					var gt uint32
					var gf int32
					passes[simMerge(gb, k, cand, &gc, cap, &gt, &gf)] = true
					if !slices.Equal(gb, wb) || gt != wt || gf != wf || gc != wc {
						t.Fatalf("%s k=%d nc=%d over=%v: sim best %v theta %#x flags %d count %d; ref %v %#x %d %d", kind, k, nc, over, gb[:min(k, 8)], gt, gf, gc, wb[:min(k, 8)], wt, wf, wc)
					}
				}
			}
		}
	}
	if !passes[4] && !passes[3] && !passes[2] && !passes[1] {
		t.Error("no selection stopped early (after the key bytes)")
	}
	if !passes[8] {
		t.Error("no selection needed the row bytes (8 passes): ties are not covered")
	}
}

// TestThresholdPipelineRef runs the span-by-span pipeline with the
// references (scan, merge after each span, spans in ascending row order,
// strict threshold) and compares with the naive top-k, including ties
// across span boundaries (quantized data).
func TestThresholdPipelineRef(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	const dim = 16
	for _, n := range []int{1, 100, 5000} {
		for _, k := range []int{1, 10, 256, 257, 2048} {
			t.Run(fmt.Sprintf("n=%d/k=%d", n, k), func(t *testing.T) {
				const nq = 3
				corpus := widen(quantF16(r, n*dim))
				q := widen(quantF16(r, nq*dim))
				cap := n + 1
				best := make([]Pair, nq*k)
				for i := range best {
					best[i] = Pair{0, -1}
				}
				theta := make([]uint32, nq)
				count := make([]int32, nq)
				flags := make([]int32, nq)
				cand := make([]Pair, nq*cap)
				for lo := 0; lo < n; {
					hi := min(n, lo+1+r.IntN(700))
					ScanRef(ScanRefArgs{Corpus: corpus, Dim: dim, RowLo: lo, RowHi: hi, Q: q, NQ: nq, Theta: theta, Cand: cand, Count: count, Cap: cap})
					if err := MergeRef(MergeRefArgs{Best: best, K: k, Cand: cand, Count: count, Cap: cap, Theta: theta, Flags: flags, NQ: nq}); err != nil {
						t.Fatal(err)
					}
					lo = hi
				}
				for qi := 0; qi < nq; qi++ {
					scores := make([]float32, n)
					for row := 0; row < n; row++ {
						var s float32
						for j := 0; j < dim; j++ {
							s += corpus[row*dim+j] * q[qi*dim+j]
						}
						scores[row] = s
					}
					want := naiveTopK(scores, nil, 0, k)
					for i := 0; i < k; i++ {
						g := best[qi*k+i]
						if i >= len(want) {
							if g.Row != -1 {
								t.Fatalf("q%d slot %d: %+v, want empty", qi, i, g)
							}
							continue
						}
						if g.Row != want[i].Row || g.Key != Key(want[i].Score) {
							t.Fatalf("q%d rank %d: (%d, %v), want (%d, %v)", qi, i, g.Row, Unkey(g.Key), want[i].Row, want[i].Score)
						}
					}
					if flags[qi] != 0 {
						t.Fatalf("q%d flagged overflow with cap %d", qi, cap)
					}
				}
			})
		}
	}
}
