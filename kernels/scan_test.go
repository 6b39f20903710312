package kernels

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/cuda/cudatest"
)

// TestScanLaunchArgsMatchPTX: the wrappers of scan.cu's kernels pass the
// parameters the committed PTX declares (sizes and order).
func TestScanLaunchArgsMatchPTX(t *testing.T) {
	st := ScanState{}
	for _, img := range []struct {
		name string
		ptx  []byte
	}{{"sm_80", scanPTXSM80}, {"sm_90", scanPTXSM90}} {
		params := ptxParams(string(img.ptx))
		kernels := map[string][]any{
			"rls_scan_init": scanInitArgs(st),
			"rls_merge":     mergeArgs(st),
			"rls_filter":    filterArgs(FilterArgs{}, st),
		}
		for _, c := range ScanConfigs {
			kernels[c.Name] = scanArgs(ScanArgs{}, c.Int8)
		}
		for name, args := range kernels {
			t.Run(img.name+"/"+name, func(t *testing.T) { argsMatchPTX(t, params[name], args) })
		}
	}
}

// gpuScanEnv is device memory for one scan problem.
type gpuScanEnv struct {
	c    *cuda.Ctx
	m    *Module
	s    *cuda.Stream
	bufs []*cuda.Buffer
}

func (e *gpuScanEnv) alloc(bytes int) *cuda.Buffer {
	b, err := e.c.Alloc(int64(max(bytes, 16)))
	if err != nil {
		panic(err)
	}
	e.bufs = append(e.bufs, b)
	return b
}

func (e *gpuScanEnv) close() {
	for _, b := range e.bufs {
		b.Close()
	}
}

func u16bytes(v []uint16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], x)
	}
	return b
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

func pairBytes(v []Pair) []byte {
	b := make([]byte, PairBytes*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[8*i:], x.Key)
		binary.LittleEndian.PutUint32(b[8*i+4:], uint32(x.Row))
	}
	return b
}

func readPairs(c *cuda.Ctx, b *cuda.Buffer, n int) ([]Pair, error) {
	raw := make([]byte, PairBytes*n)
	if err := c.CopyDtoH(raw, b, 0); err != nil {
		return nil, err
	}
	out := make([]Pair, n)
	DecodePairs(out, raw)
	return out, nil
}

func readU32(c *cuda.Ctx, b *cuda.Buffer, n int) ([]uint32, error) {
	raw := make([]byte, 4*n)
	if err := c.CopyDtoH(raw, b, 0); err != nil {
		return nil, err
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	return out, nil
}

func i32s(u []uint32) []int32 {
	out := make([]int32, len(u))
	for i, v := range u {
		out[i] = int32(v)
	}
	return out
}

// TestScanKernelsGPU runs rls_scan16/64/128, rls_filter and rls_merge on
// the GPU against ScanRef, FilterRef and MergeRef, then the whole
// threshold pipeline (init, scan spans, merge after each) against the
// naive top-k for k of 1 to 2,048.
func TestScanKernelsGPU(t *testing.T) {
	dev := cudatest.Device(t)
	r := rand.New(rand.NewPCG(31, 1))
	err := dev.Do(func(c *cuda.Ctx) error {
		m, err := Load(c)
		if err != nil {
			return err
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		for i, sc := range ScanConfigs {
			t.Logf("%s: persistent grid %d blocks (%d threads, %d bytes of shared memory)", sc.Name, m.scanGrid[i], sc.Threads(), sc.SharedBytes())
		}
		e := &gpuScanEnv{c: c, m: m, s: s}
		defer e.close()
		type shape struct{ dim, rowLo, rowHi, nq int }
		for ci, sc := range ScanConfigs {
			for _, sh := range []shape{{8, 0, 1, 1}, {72, 5, 1300, 3}, {40, 0, 129, 17}, {768, 100, 20000, []int{16, 64, 130}[ci%scanInt8Base]}} {
				if sc.Int8 {
					sh.dim = (sh.dim + 15) / 16 * 16 // the int8 kernels read 16 codes at a time
				}
				if err := gpuScanCase(t, e, r, ci, sh.dim, sh.rowLo, sh.rowHi, sh.nq); err != nil {
					return err
				}
			}
		}
		for _, rows := range []int{1, 33, 8193, 100000} {
			if err := gpuFilterCase(t, e, r, rows); err != nil {
				return err
			}
		}
		for _, k := range []int{1, 10, 256, 257, 2048} {
			if err := gpuMergeCase(t, e, r, k); err != nil {
				return err
			}
		}
		for _, k := range []int{1, 10, 100, 256, 257, 1024, 2048} {
			if err := gpuPipelineCase(t, e, r, k); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// gpuScanCase runs one rls_scan launch (ScanConfigs[ci], fp16 or int8)
// on random data and compares the survivors with ScanRef or ScanI8Ref.
func gpuScanCase(t *testing.T, e *gpuScanEnv, r *rand.Rand, ci, dim, rowLo, rowHi, nq int) error {
	c := e.c
	int8 := ScanConfigs[ci].Int8
	theta := make([]uint32, nq)
	for i := range theta {
		if i%2 == 1 {
			if int8 {
				theta[i] = Key(float32(r.IntN(9)-4) * 8) // int8 scores are larger
			} else {
				theta[i] = Key(float32(r.IntN(9)-4) / 2)
			}
		}
	}
	cap := rowHi - rowLo + 1
	wantC, wantN := make([]Pair, nq*cap), make([]int32, nq)
	var corpusB, qB []byte
	var qoff []float32
	if int8 {
		codes, packed, off, qs := i8Problem(t, r, ci, rowHi, dim, nq)
		corpusB, qB, qoff = i8bytes(codes), u16bytes(packed), off
		ScanI8Ref(ScanI8RefArgs{Codes: codes, Dim: dim, RowLo: rowLo, RowHi: rowHi, Q: qs, QOff: qoff, NQ: nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
	} else {
		corpus, q := quantF16(r, rowHi*dim), quantF16(r, QueryRows(ci, nq)*dim)
		corpusB, qB = u16bytes(corpus), u16bytes(q)
		ScanRef(ScanRefArgs{Corpus: widen(corpus), Dim: dim, RowLo: rowLo, RowHi: rowHi, Q: widen(q), NQ: nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
	}
	db, qb, ob, tb := e.alloc(len(corpusB)), e.alloc(len(qB)), e.alloc(4*nq), e.alloc(4*nq)
	cb, nb := e.alloc(PairBytes*nq*cap), e.alloc(4*nq)
	for _, x := range []struct {
		b *cuda.Buffer
		v []byte
	}{{db, corpusB}, {qb, qB}, {ob, f32bytes(append(qoff, make([]float32, nq-len(qoff))...))}, {tb, u32bytes(theta)}, {nb, make([]byte, 4*nq)}} {
		if err := c.CopyHtoD(x.b, 0, x.v); err != nil {
			return err
		}
	}
	a := ScanArgs{Corpus: db.Ptr(0), Dim: dim, RowLo: rowLo, RowHi: rowHi, Q: qb.Ptr(0), NQ: nq, Theta: tb.Ptr(0), Cand: cb.Ptr(0), Count: nb.Ptr(0), Cap: cap}
	if int8 {
		a.QOff = ob.Ptr(0)
	}
	if err := e.m.Scan(c, e.s, ci, a); err != nil {
		return err
	}
	if err := c.Sync(e.s); err != nil {
		return err
	}
	gotC, err := readPairs(c, cb, nq*cap)
	if err != nil {
		return err
	}
	gotN, err := readU32(c, nb, nq)
	if err != nil {
		return err
	}
	survivorsEqual(t, fmt.Sprintf("%s dim=%d rows=[%d,%d) nq=%d", ScanConfigs[ci].Name, dim, rowLo, rowHi, nq), nq, cap, gotC, i32s(gotN), wantC, wantN)
	return nil
}

// i8Problem is an int8 scan problem whose scores are exact in float32 in
// any order: codes in [-128, 127] (the extremes always present), queries
// small multiples of 1/2, scales powers of two, offsets multiples of 1/4.
// It returns the codes, the packed queries and offsets (PackI8Queries,
// whose offsets it checks against Σ q·offset computed here) and the
// references' queries (q∘scale in natural order).
func i8Problem(t testing.TB, r *rand.Rand, ci, rows, dim, nq int) (codes []int8, packed []uint16, qoff, qs []float32) {
	t.Helper()
	codes = make([]int8, rows*dim)
	for i := range codes {
		codes[i] = int8(r.IntN(256) - 128)
	}
	for i := 0; i < min(len(codes), 3); i++ {
		codes[r.IntN(len(codes))] = []int8{-128, 127, 0}[i]
	}
	scale, offset := make([]float32, dim), make([]float32, dim)
	for j := range scale {
		scale[j] = []float32{0.5, 1, 2}[r.IntN(3)]
		offset[j] = float32(r.IntN(9)-4) / 4
	}
	q := widen(quantF16(r, nq*dim))
	packed, qoff = make([]uint16, QueryRows(ci, nq)*dim), make([]float32, nq)
	if err := PackI8Queries(packed, qoff, q, nq, dim, scale, offset); err != nil {
		t.Fatal(err)
	}
	qs = make([]float32, nq*dim)
	for qi := 0; qi < nq; qi++ {
		var off float64
		for j := 0; j < dim; j++ {
			qs[qi*dim+j] = q[qi*dim+j] * scale[j]
			off += float64(q[qi*dim+j]) * float64(offset[j])
		}
		if float32(off) != qoff[qi] {
			t.Fatalf("PackI8Queries offset of query %d = %v, want %v", qi, qoff[qi], float32(off))
		}
	}
	return codes, packed, qoff, qs
}

// i8bytes is int8 codes as device bytes.
func i8bytes(v []int8) []byte {
	b := make([]byte, len(v))
	for i, c := range v {
		b[i] = byte(c)
	}
	return b
}

func gpuFilterCase(t *testing.T, e *gpuScanEnv, r *rand.Rand, rows int) error {
	c := e.c
	const nq, cap = 3, 5000
	ld := rows + 3
	scores := make([]float32, nq*ld)
	for q := 0; q < nq; q++ {
		copy(scores[q*ld:], genScores(r, rows, []string{"rand", "ties", "special"}[q]))
	}
	theta := []uint32{Key(2.5), Key(0.5), Key(0.75)} // rand: rare survivors; ties: many; special: few
	sb, tb, cb, nb := e.alloc(4*len(scores)), e.alloc(4*nq), e.alloc(PairBytes*nq*cap), e.alloc(4*nq)
	if err := c.CopyHtoD(sb, 0, f32bytes(scores)); err != nil {
		return err
	}
	if err := c.CopyHtoD(tb, 0, u32bytes(theta)); err != nil {
		return err
	}
	if err := c.CopyHtoD(nb, 0, make([]byte, 4*nq)); err != nil {
		return err
	}
	st := ScanState{Theta: tb.Ptr(0), Cand: cb.Ptr(0), Count: nb.Ptr(0), NQ: nq, Cap: cap}
	if err := e.m.Filter(c, e.s, FilterArgs{Scores: sb.Ptr(0), LdS: int64(ld), Rows: rows, RowBase: 7, NQ: nq}, st); err != nil {
		return err
	}
	if err := c.Sync(e.s); err != nil {
		return err
	}
	gotC, err := readPairs(c, cb, nq*cap)
	if err != nil {
		return err
	}
	gotN, err := readU32(c, nb, nq)
	if err != nil {
		return err
	}
	wantC, wantN := make([]Pair, nq*cap), make([]int32, nq)
	FilterRef(FilterRefArgs{Scores: scores, LdS: ld, Rows: rows, RowBase: 7, NQ: nq, Theta: theta, Cand: wantC, Count: wantN, Cap: cap})
	survivorsEqual(t, fmt.Sprintf("filter rows=%d", rows), nq, cap, gotC, i32s(gotN), wantC, wantN)
	return nil
}

func gpuMergeCase(t *testing.T, e *gpuScanEnv, r *rand.Rand, k int) error {
	c := e.c
	const nq, cap = 4, 6000
	best := make([]Pair, nq*k)
	cand := make([]Pair, nq*cap)
	count := make([]int32, nq)
	for q := 0; q < nq; q++ {
		kind := []string{"rand", "ties", "special", "ties"}[q]
		rows := r.Perm(20000)
		var bb []Pair
		for i, s := range genScores(r, r.IntN(k+1), kind) {
			if kk := Key(s); kk != 0 {
				bb = append(bb, Pair{kk, int32(rows[i])})
			}
		}
		SortPairs(bb)
		for i := 0; i < k; i++ {
			best[q*k+i] = Pair{0, -1}
			if i < len(bb) {
				best[q*k+i] = bb[i]
			}
		}
		n := 0
		for _, s := range genScores(r, []int{0, 300, 5000, cap + 50}[q], kind) {
			if kk := Key(s); kk != 0 {
				if n < cap {
					cand[q*cap+n] = Pair{kk, int32(rows[k+n%(20000-k)])}
				}
				n++
			}
		}
		count[q] = int32(n)
		if q == 3 { // overflow: rows need not be unique past cap (dropped)
			count[q] = int32(cap + 50)
			for i := 0; i < cap; i++ {
				cand[q*cap+i] = Pair{Key(float32(r.NormFloat64())), int32(rows[k+i])}
			}
		}
	}
	bb, cb, nb, tb, fb := e.alloc(PairBytes*nq*k), e.alloc(PairBytes*nq*cap), e.alloc(4*nq), e.alloc(4*nq), e.alloc(4*nq)
	for _, x := range []struct {
		b *cuda.Buffer
		v []byte
	}{{bb, pairBytes(best)}, {cb, pairBytes(cand)}, {nb, u32bytes(u32s(count))}, {tb, make([]byte, 4*nq)}, {fb, make([]byte, 4*nq)}} {
		if err := c.CopyHtoD(x.b, 0, x.v); err != nil {
			return err
		}
	}
	st := ScanState{Best: bb.Ptr(0), Theta: tb.Ptr(0), Count: nb.Ptr(0), Flags: fb.Ptr(0), Cand: cb.Ptr(0), NQ: nq, K: k, Cap: cap}
	if err := e.m.Merge(c, e.s, st); err != nil {
		return err
	}
	if err := c.Sync(e.s); err != nil {
		return err
	}
	gotB, err := readPairs(c, bb, nq*k)
	if err != nil {
		return err
	}
	gotT, _ := readU32(c, tb, nq)
	gotN, _ := readU32(c, nb, nq)
	gotF, err := readU32(c, fb, nq)
	if err != nil {
		return err
	}
	theta, flags := make([]uint32, nq), make([]int32, nq)
	if err := MergeRef(MergeRefArgs{Best: best, K: k, Cand: cand, Count: count, Cap: cap, Theta: theta, Flags: flags, NQ: nq}); err != nil {
		return err
	}
	if !slices.Equal(gotB, best) || !slices.Equal(gotT, theta) || !slices.Equal(i32s(gotN), count) || !slices.Equal(i32s(gotF), flags) {
		for q := 0; q < nq; q++ {
			for i := 0; i < k; i++ {
				if gotB[q*k+i] != best[q*k+i] {
					t.Errorf("merge k=%d q%d slot %d: GPU %+v, reference %+v", k, q, i, gotB[q*k+i], best[q*k+i])
					break
				}
			}
		}
		t.Errorf("merge k=%d: GPU theta %v count %v flags %v; reference %v %v %v", k, gotT, gotN, gotF, theta, count, flags)
	}
	return nil
}

func u32s(v []int32) []uint32 {
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = uint32(x)
	}
	return out
}

// gpuPipelineCase runs init, then scan + merge over ascending spans of
// uneven length, and compares the best lists with the naive top-k
// (quantized data: many ties, also across span boundaries).
func gpuPipelineCase(t *testing.T, e *gpuScanEnv, r *rand.Rand, k int) error {
	c := e.c
	const n, dim, nq = 30000, 64, 5
	ci := ScanFor(nq, false)
	corpus := quantF16(r, n*dim)
	q := quantF16(r, QueryRows(ci, nq)*dim)
	cap := 20000
	db, qb := e.alloc(2*len(corpus)), e.alloc(2*len(q))
	bb, cb := e.alloc(PairBytes*nq*k), e.alloc(PairBytes*nq*cap)
	tb, nb, fb := e.alloc(4*nq), e.alloc(4*nq), e.alloc(4*nq)
	if err := c.CopyHtoD(db, 0, u16bytes(corpus)); err != nil {
		return err
	}
	if err := c.CopyHtoD(qb, 0, u16bytes(q)); err != nil {
		return err
	}
	st := ScanState{Best: bb.Ptr(0), Theta: tb.Ptr(0), Count: nb.Ptr(0), Flags: fb.Ptr(0), Cand: cb.Ptr(0), NQ: nq, K: k, Cap: cap}
	if err := e.m.ScanInit(c, e.s, st); err != nil {
		return err
	}
	for lo := 0; lo < n; {
		hi := min(n, lo+cap/2+r.IntN(cap/2))
		if lo == 0 {
			hi = 4096
		}
		if err := e.m.Scan(c, e.s, ci, ScanArgs{Corpus: db.Ptr(0), Dim: dim, RowLo: lo, RowHi: hi, Q: qb.Ptr(0), NQ: nq,
			Theta: st.Theta, Cand: st.Cand, Count: st.Count, Cap: cap}); err != nil {
			return err
		}
		if err := e.m.Merge(c, e.s, st); err != nil {
			return err
		}
		lo = hi
	}
	if err := c.Sync(e.s); err != nil {
		return err
	}
	got, err := readPairs(c, bb, nq*k)
	if err != nil {
		return err
	}
	flags, _ := readU32(c, fb, nq)
	cf, qf := widen(corpus), widen(q)
	for qi := 0; qi < nq; qi++ {
		if flags[qi] != 0 {
			t.Errorf("pipeline k=%d q%d: overflow flagged", k, qi)
		}
		scores := make([]float32, n)
		for row := range scores {
			var s float32
			for j := 0; j < dim; j++ {
				s += cf[row*dim+j] * qf[qi*dim+j]
			}
			scores[row] = s
		}
		want := naiveTopK(scores, nil, 0, k)
		for i, w := range want {
			if g := got[qi*k+i]; g.Row != w.Row || g.Key != Key(w.Score) {
				t.Errorf("pipeline k=%d q%d rank %d: GPU (%d, %v), oracle (%d, %v)", k, qi, i, g.Row, Unkey(g.Key), w.Row, w.Score)
				return nil
			}
		}
	}
	return nil
}

// TestDecodePairs: device pairs and int32 values decode little-endian,
// Row as signed (-1 = empty), and never past the shorter of dst and b.
func TestDecodePairs(t *testing.T) {
	b := binary.LittleEndian.AppendUint32(nil, 0xfedcba98)
	b = binary.LittleEndian.AppendUint32(b, 0xffffffff)
	b = binary.LittleEndian.AppendUint32(b, 7)
	b = binary.LittleEndian.AppendUint32(b, 42)
	p := make([]Pair, 3)
	DecodePairs(p, b)
	if p[0] != (Pair{0xfedcba98, -1}) || p[1] != (Pair{7, 42}) || p[2] != (Pair{}) {
		t.Errorf("pairs %v", p)
	}
	v := make([]int32, 3)
	DecodeInt32s(v[:2], b)
	if v[0] != -19088744 || v[1] != -1 || v[2] != 0 {
		t.Errorf("int32s %v", v)
	}
}
