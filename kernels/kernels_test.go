package kernels

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

// naiveTopK is the oracle: all valid (score, row) pairs of one list sorted
// by rlsearch.Less, first k. NaN scores and negative rows are dropped.
func naiveTopK(scores []float32, rows []int32, rowBase, k int) []rlsearch.Hit {
	var all []rlsearch.Hit
	for i, s := range scores {
		row := int32(rowBase + i)
		if rows != nil {
			row = rows[i]
		}
		if s != s || row < 0 {
			continue
		}
		if s == 0 {
			s = 0 // -0 ties +0
		}
		all = append(all, rlsearch.Hit{Row: row, Score: s})
	}
	slices.SortFunc(all, func(a, b rlsearch.Hit) int {
		if rlsearch.Less(a, b) {
			return -1
		}
		if rlsearch.Less(b, a) {
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// genScores makes n scores of a kind: "rand" (continuous), "ties" (few
// distinct values), "special" (NaN, ±Inf, ±0, subnormals among ties).
func genScores(r *rand.Rand, n int, kind string) []float32 {
	s := make([]float32, n)
	for i := range s {
		switch kind {
		case "rand":
			s[i] = float32(r.NormFloat64())
		case "ties":
			s[i] = float32(r.IntN(7)-3) / 4
		case "special":
			vals := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
				math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1, 0.5}
			s[i] = vals[r.IntN(len(vals))]
		}
	}
	return s
}

func TestKeyOrder(t *testing.T) {
	vals := []float32{float32(math.Inf(-1)), -math.MaxFloat32, -1, -math.SmallestNonzeroFloat32, 0, math.SmallestNonzeroFloat32, 1, math.MaxFloat32, float32(math.Inf(1))}
	for i := 1; i < len(vals); i++ {
		if Key(vals[i-1]) >= Key(vals[i]) {
			t.Errorf("Key(%v)=%#x not below Key(%v)=%#x", vals[i-1], Key(vals[i-1]), vals[i], Key(vals[i]))
		}
	}
	for _, v := range vals {
		if Key(v) == 0 || Unkey(Key(v)) != v {
			t.Errorf("Unkey(Key(%v)) = %v", v, Unkey(Key(v)))
		}
	}
	if Key(float32(math.NaN())) != 0 || Key(float32(math.Copysign(0, -1))) != Key(0) {
		t.Error("NaN must key to 0 and -0 to +0's key")
	}
}

// TestTopKRefOracle: the reference, segment by segment and then merged
// (the two-level scheme ann uses), equals the naive oracle.
func TestTopKRefOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []string{"rand", "ties", "special"} {
		for _, n := range []int{1, 2, 31, 1023, 1024, 1025, 5000} {
			for _, k := range []int{1, 10, 100, 1024, 2048} {
				for _, segLen := range []int{1, 7, 1024, 4096} {
					if (n+segLen-1)/segLen*k > 1<<17 {
						continue // the candidate list alone would dominate the run time
					}
					name := fmt.Sprintf("%s/n=%d/k=%d/seg=%d", kind, n, k, segLen)
					t.Run(name, func(t *testing.T) {
						const nq, rowBase = 3, 17
						ld := n + 5
						scores := make([]float32, nq*ld)
						for q := 0; q < nq; q++ {
							copy(scores[q*ld:], genScores(r, n, kind))
						}
						nSeg := (n + segLen - 1) / segLen
						candLd := nSeg * k
						cs := make([]float32, nq*candLd)
						cr := make([]int32, nq*candLd)
						if err := TopKRef(TopKRefArgs{Scores: scores, LdS: ld, Len: n, SegLen: segLen, RowBase: rowBase, K: k, NQ: nq, OutS: cs, OutR: cr, LdOut: candLd}); err != nil {
							t.Fatal(err)
						}
						// merge in place: one segment over all candidates, output slot 0
						if err := TopKRef(TopKRefArgs{Scores: cs, Rows: cr, LdS: candLd, Len: candLd, SegLen: candLd, K: k, NQ: nq, OutS: cs, OutR: cr, LdOut: candLd}); err != nil {
							t.Fatal(err)
						}
						for q := 0; q < nq; q++ {
							want := naiveTopK(scores[q*ld:q*ld+n], nil, rowBase, k)
							for i := 0; i < k; i++ {
								gs, gr := cs[q*candLd+i], cr[q*candLd+i]
								if i >= len(want) {
									if gr != -1 || !math.IsInf(float64(gs), -1) {
										t.Fatalf("q%d slot %d: got (%d, %v), want padding (-1, -Inf)", q, i, gr, gs)
									}
									continue
								}
								if gr != want[i].Row || Key(gs) != Key(want[i].Score) {
									t.Fatalf("q%d rank %d: got (%d, %v), want (%d, %v)", q, i, gr, gs, want[i].Row, want[i].Score)
								}
							}
						}
					})
				}
			}
		}
	}
}

func TestF32ToF16Ref(t *testing.T) {
	src := []float32{0, 1, -1, 65504, 65520, 1e-8, 0.1, float32(math.Inf(1)), 1 + 1.0/2048, 1 + 3.0/2048}
	dst := make([]uint16, len(src))
	F32ToF16Ref(dst, src)
	want := []uint16{0x0000, 0x3c00, 0xbc00, 0x7bff, 0x7c00, 0x0000, 0x2e66, 0x7c00, 0x3c00, 0x3c02}
	for i := range src {
		if dst[i] != want[i] {
			t.Errorf("fp16(%v) = %#04x, want %#04x", src[i], dst[i], want[i])
		}
	}
}

// TestEmbeddedUpToDate recompiles topk.cu, scan.cu and nn.cu when nvcc
// 11.8 (the committed images' compiler) is on PATH and compares with the
// committed images.
func TestEmbeddedUpToDate(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not on PATH: cannot check the committed PTX (install nvidia-cuda-toolkit, then make kernels)")
	}
	ver, err := exec.Command(nvcc, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ver), "release 11.8") {
		t.Skipf("nvcc is not 11.8 (the committed images' compiler): %s", ver)
	}
	dir := t.TempDir()
	if out, err := exec.Command("bash", "build.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"topk_sm80.ptx", "topk_sm90.ptx", "topk_sm90.cubin", "scan_sm80.ptx", "scan_sm90.ptx", "scan_sm90.cubin", "resources_sm90.txt",
		"nn_sm80.ptx", "nn_sm90.ptx", "nn_sm90.cubin"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s is stale: run `make kernels` and commit", f)
		}
	}
}

// TestKernelsGPU runs both kernels on the GPU against the references.
func TestKernelsGPU(t *testing.T) {
	dev := cudatest.Device(t)
	r := rand.New(rand.NewPCG(3, 4))
	err := dev.Do(func(c *cuda.Ctx) error {
		m, err := Load(c)
		if err != nil {
			return err
		}
		t.Logf("loaded %s on %s", m.Image, dev.Info().Name)
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		// conversion
		src := genScores(r, 10000, "rand")
		want := make([]uint16, len(src))
		F32ToF16Ref(want, src)
		sb, err := c.Alloc(int64(4 * len(src)))
		if err != nil {
			return err
		}
		hb, err := c.Alloc(int64(2 * len(src)))
		if err != nil {
			return err
		}
		if err := c.CopyHtoD(sb, 0, f32bytes(src)); err != nil {
			return err
		}
		if err := m.F32ToF16(c, s, sb.Ptr(0), hb.Ptr(0), len(src)); err != nil {
			return err
		}
		if err := c.Sync(s); err != nil {
			return err
		}
		got := make([]byte, 2*len(src))
		if err := c.CopyDtoH(got, hb, 0); err != nil {
			return err
		}
		for i := range want {
			if g := binary.LittleEndian.Uint16(got[2*i:]); g != want[i] {
				t.Errorf("f32_to_f16(%v) = %#04x, want %#04x (%v)", src[i], g, want[i], float16.Frombits(want[i]))
				break
			}
		}
		// top-k, implicit rows then merge with explicit rows in place
		for _, kind := range []string{"rand", "ties", "special"} {
			for _, tc := range []struct{ n, k, seg int }{{1, 1, 1}, {1025, 10, 1024}, {100003, 1024, 16384}, {70000, 2048, 65536}, {5000, 100, 7}} {
				if err := gpuTopKCase(t, c, m, s, r, kind, tc.n, tc.k, tc.seg); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func gpuTopKCase(t *testing.T, c *cuda.Ctx, m *Module, s *cuda.Stream, r *rand.Rand, kind string, n, k, seg int) error {
	const nq = 3
	scores := make([]float32, nq*n)
	for q := 0; q < nq; q++ {
		copy(scores[q*n:], genScores(r, n, kind))
	}
	nSeg := (n + seg - 1) / seg
	ld := nSeg * k
	wantS := make([]float32, nq*ld)
	wantR := make([]int32, nq*ld)
	ref := TopKRefArgs{Scores: scores, LdS: n, Len: n, SegLen: seg, RowBase: 5, K: k, NQ: nq, OutS: wantS, OutR: wantR, LdOut: ld}
	if err := TopKRef(ref); err != nil {
		return err
	}
	if err := TopKRef(TopKRefArgs{Scores: wantS, Rows: wantR, LdS: ld, Len: ld, SegLen: ld, K: k, NQ: nq, OutS: wantS, OutR: wantR, LdOut: ld}); err != nil {
		return err
	}
	sb, err := c.Alloc(int64(4 * len(scores)))
	if err != nil {
		return err
	}
	defer sb.Close()
	os_, err := c.Alloc(int64(4 * nq * ld))
	if err != nil {
		return err
	}
	defer os_.Close()
	or, err := c.Alloc(int64(4 * nq * ld))
	if err != nil {
		return err
	}
	defer or.Close()
	if err := c.CopyHtoD(sb, 0, f32bytes(scores)); err != nil {
		return err
	}
	if err := m.TopK(c, s, TopKArgs{Scores: sb.Ptr(0), LdS: int64(n), Len: n, SegLen: seg, RowBase: 5, K: k, NQ: nq, OutS: os_.Ptr(0), OutR: or.Ptr(0), LdOut: int64(ld)}); err != nil {
		return err
	}
	if err := m.TopK(c, s, TopKArgs{Scores: os_.Ptr(0), Rows: or.Ptr(0), LdS: int64(ld), Len: ld, SegLen: ld, K: k, NQ: nq, OutS: os_.Ptr(0), OutR: or.Ptr(0), LdOut: int64(ld)}); err != nil {
		return err
	}
	if err := c.Sync(s); err != nil {
		return err
	}
	gs := make([]byte, 4*nq*ld)
	gr := make([]byte, 4*nq*ld)
	if err := c.CopyDtoH(gs, os_, 0); err != nil {
		return err
	}
	if err := c.CopyDtoH(gr, or, 0); err != nil {
		return err
	}
	for q := 0; q < nq; q++ {
		for i := 0; i < k; i++ {
			j := q*ld + i
			s := math.Float32frombits(binary.LittleEndian.Uint32(gs[4*j:]))
			row := int32(binary.LittleEndian.Uint32(gr[4*j:]))
			if row != wantR[j] || Key(s) != Key(wantS[j]) {
				t.Errorf("%s n=%d k=%d seg=%d q%d rank %d: GPU (%d, %v), reference (%d, %v)", kind, n, k, seg, q, i, row, s, wantR[j], wantS[j])
				return nil
			}
		}
	}
	return nil
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// TestLaunchArgsMatchPTX checks, without a GPU, that the Go wrappers pass
// each kernel's parameters with the sizes and in the order the committed
// PTX declares (a mismatch would corrupt every launch silently).
func TestLaunchArgsMatchPTX(t *testing.T) {
	for _, img := range []struct {
		name string
		ptx  []byte
	}{{"sm_80", ptxSM80}, {"sm_90", ptxSM90}} {
		params := ptxParams(string(img.ptx))
		for _, k := range []struct {
			name string
			args []any
		}{
			{"rls_f32_to_f16", f2hArgs(1, 2, 3)},
			{"rls_topk", topkArgs(TopKArgs{})},
		} {
			t.Run(img.name+"/"+k.name, func(t *testing.T) { argsMatchPTX(t, params[k.name], k.args) })
		}
	}
}

// argsMatchPTX fails t unless args have, in order, the parameter sizes
// want that the PTX declares for a kernel (ptxParams).
func argsMatchPTX(t *testing.T, want []int, args []any) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("no such .entry in the PTX")
	}
	if len(want) != len(args) {
		t.Fatalf("PTX declares %d parameters %v, wrapper passes %d", len(want), want, len(args))
	}
	for i, a := range args {
		if argSize(a) != want[i] {
			t.Errorf("parameter %d: wrapper passes %T (%d bytes), PTX declares %d bytes", i, a, argSize(a), want[i])
		}
	}
}

func argSize(a any) int {
	switch a.(type) {
	case cuda.DevPtr, int64, uint64:
		return 8
	case int32, uint32, float32:
		return 4
	}
	return -1
}

// ptxParams maps each .entry to its parameter sizes in bytes.
func ptxParams(ptx string) map[string][]int {
	out := map[string][]int{}
	cur := ""
	for _, line := range strings.Split(ptx, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, ".visible .entry ") {
			cur = strings.TrimSuffix(strings.TrimPrefix(line, ".visible .entry "), "(")
			continue
		}
		if cur == "" {
			continue
		}
		if strings.HasPrefix(line, ")") {
			cur = ""
			continue
		}
		if f := strings.Fields(line); len(f) >= 3 && f[0] == ".param" {
			n := 0
			switch f[1] {
			case ".u64", ".b64", ".s64", ".f64":
				n = 8
			case ".u32", ".b32", ".s32", ".f32":
				n = 4
			}
			out[cur] = append(out[cur], n)
		}
	}
	return out
}

// simTopKSegment replays rls_topk's algorithm for one block step by step
// (four 8-bit radix-histogram passes for the threshold key T, then a gather
// of the keys above T and, in index order, the first `need` keys equal to
// T, rounds of `threads` entries with the block's early exit, then the
// sort), sequentially, so that the selection logic of topk.cu is tested on
// machines without a GPU. It returns the k output slots.
func simTopKSegment(scores []float32, rows []int32, rowBase, lo, k, threads int) ([]float32, []int32) {
	n := len(scores)
	keyAt := func(i int) uint32 {
		if rows != nil && rows[i] < 0 {
			return 0
		}
		return Key(scores[i])
	}
	want := min(k, n)
	var prefix, mask uint32
	remaining := want
	if want > 0 {
		for shift := 24; shift >= 0; shift -= 8 {
			var hist [256]int
			for i := 0; i < n; i++ {
				if key := keyAt(i); key&mask == prefix {
					hist[(key>>shift)&255]++
				}
			}
			cum := 0
			for b := 255; b >= 0; b-- {
				if cum+hist[b] >= remaining {
					prefix |= uint32(b) << shift
					remaining -= cum
					break
				}
				cum += hist[b]
			}
			mask |= 0xff << shift
		}
	}
	T := prefix
	need, nGt := 0, 0
	if want > 0 {
		nGt = want - remaining
		if T != 0 {
			need = remaining
		}
	}
	nOut := nGt + need
	ckey := make([]uint32, nOut)
	crow := make([]int32, nOut)
	gt, eqTaken := 0, 0
	for base := 0; base < n && want > 0; base += threads {
		roundEq := 0
		for i := base; i < min(base+threads, n); i++ {
			key := keyAt(i)
			row := int32(rowBase + lo + i)
			if rows != nil {
				row = rows[i]
			}
			if key > T {
				ckey[gt], crow[gt] = key, row
				gt++
			} else if need > 0 && key == T {
				if p := eqTaken + roundEq; p < need {
					ckey[nGt+p], crow[nGt+p] = key, row
				}
				roundEq++
			}
		}
		eqTaken += roundEq
		if eqTaken >= need && gt >= nGt {
			break
		}
	}
	idx := make([]int, nOut)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if ckey[a] != ckey[b] {
			if ckey[a] > ckey[b] {
				return -1
			}
			return 1
		}
		return int(crow[a]) - int(crow[b])
	})
	os, or := make([]float32, k), make([]int32, k)
	for i := 0; i < k; i++ {
		if i < nOut {
			os[i], or[i] = Unkey(ckey[idx[i]]), crow[idx[i]]
		} else {
			os[i], or[i] = float32(math.Inf(-1)), -1
		}
	}
	return os, or
}

// TestKernelAlgorithmSim: the replay of rls_topk's selection equals the
// reference on every kind of input, with and without explicit rows.
func TestKernelAlgorithmSim(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []string{"rand", "ties", "special"} {
		for _, n := range []int{1, 2, 33, 1023, 1024, 1025, 3000} {
			for _, k := range []int{1, 7, 100, 1024, 2048} {
				t.Run(fmt.Sprintf("%s/n=%d/k=%d", kind, n, k), func(t *testing.T) {
					scores := genScores(r, n, kind)
					ws, wr := make([]float32, k), make([]int32, k)
					if err := TopKRef(TopKRefArgs{Scores: scores, LdS: n, Len: n, SegLen: n, RowBase: 3, K: k, NQ: 1, OutS: ws, OutR: wr, LdOut: k}); err != nil {
						t.Fatal(err)
					}
					gs, gr := simTopKSegment(scores, nil, 3, 0, k, Threads)
					for i := range ws {
						if gr[i] != wr[i] || Key(gs[i]) != Key(ws[i]) {
							t.Fatalf("implicit rows, slot %d: sim (%d, %v), ref (%d, %v)", i, gr[i], gs[i], wr[i], ws[i])
						}
					}
					// explicit rows: ascending with gaps, some invalid
					rows := make([]int32, n)
					for i := range rows {
						rows[i] = int32(10 + 2*i)
						if r.IntN(10) == 0 {
							rows[i] = -1
						}
					}
					if err := TopKRef(TopKRefArgs{Scores: scores, Rows: rows, LdS: n, Len: n, SegLen: n, K: k, NQ: 1, OutS: ws, OutR: wr, LdOut: k}); err != nil {
						t.Fatal(err)
					}
					gs, gr = simTopKSegment(scores, rows, 0, 0, k, 32)
					for i := range ws {
						if gr[i] != wr[i] || Key(gs[i]) != Key(ws[i]) {
							t.Fatalf("explicit rows, slot %d: sim (%d, %v), ref (%d, %v)", i, gr[i], gs[i], wr[i], ws[i])
						}
					}
				})
			}
		}
	}
}
