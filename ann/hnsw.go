package ann

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand"
	"runtime"
	"slices"
	"sync"

	"github.com/rlsearch/rlsearch"
)

// HNSWConfig configures an HNSW graph (Malkov & Yashunin 2018,
// arXiv:1603.09320). Zero fields take the defaults named on each.
type HNSWConfig struct {
	// M is the number of neighbours kept per node on levels ≥ 1; level 0
	// keeps 2·M (paper §4, "M_max0 = 2·M"). Default 16 (hnswlib's default).
	M int
	// EfConstruction is the candidate list size while inserting. Default 200
	// (hnswlib's recommended value).
	EfConstruction int
	// EfSearch is the candidate list size while searching (raised to k when
	// smaller). Default 64.
	EfSearch int
	// Seed seeds the level generator. The graph is a pure function of the
	// vectors, their order, the config and the seed, for any Workers.
	Seed int64
	// Workers is the number of build goroutines; default GOMAXPROCS.
	Workers int
	// Int8 traverses the graph with int8 codes (FitInt8 over the vectors
	// given to NewHNSW, 1 byte per value), scored as exact integer sums
	// against the query quantised to int16 (dotq.go: AVX-512 VNNI where
	// the CPU has it, the same bits everywhere), and re-ranks the EfSearch
	// candidates with the float32 vectors.
	Int8 bool
	// Progress, when set, is called from the building goroutine after each
	// insertion batch with the number of vectors inserted so far and the
	// total of the current build or Add.
	Progress func(done, total int)
}

// Validate names the first bad field.
func (c HNSWConfig) Validate() error {
	switch {
	case c.M < 0 || c.M == 1 || c.M > 256:
		return fmt.Errorf("ann: HNSWConfig.M: %d must be 0 (default) or in 2..256", c.M)
	case c.EfConstruction < 0:
		return fmt.Errorf("ann: HNSWConfig.EfConstruction: %d must be ≥ 0", c.EfConstruction)
	case c.EfSearch < 0:
		return fmt.Errorf("ann: HNSWConfig.EfSearch: %d must be ≥ 0", c.EfSearch)
	case c.Workers < 0:
		return fmt.Errorf("ann: HNSWConfig.Workers: %d must be ≥ 0", c.Workers)
	}
	return nil
}

func (c HNSWConfig) withDefaults() HNSWConfig {
	if c.M == 0 {
		c.M = 16
	}
	if c.EfConstruction == 0 {
		c.EfConstruction = 200
	}
	if c.EfSearch == 0 {
		c.EfSearch = 64
	}
	return c
}

// maxLevel caps node levels; with M ≥ 2 a level above 31 has probability
// below 2^-31 per node.
const maxLevel = 31

// HNSW is a hierarchical navigable small-world graph over inner product.
// Vectors are stored contiguously ([n, Dim] float32, plus [n, Dim] int8
// codes with Int8); level-0 adjacency is one [n, 2M+1] int32 array (count,
// then ids); the upper levels of the ~n/M nodes above level 0 are one
// [levels, M+1] slice per such node.
//
// Search is safe for concurrent use; Add must not run concurrently with
// Search or another Add.
type HNSW struct {
	cfg  HNSWConfig
	dim  int
	n    int
	vecs []float32 // own float32 copy, or f32 of src, or nil when src widens
	src  *Flat     // shared shard storage after ShareVectors; nil when h owns vecs
	rr   *FP16Rows // mapped fp16 re-rank rows after RerankOn; then vecs and src are nil
	// ownRows: rr was mapped by Compress, and Close unmaps it; closed:
	// after that Close (Search returns an error).
	ownRows, closed bool
	codes           []int8
	scale           []float32
	offset          []float32
	level           []uint8
	links0          []int32   // [n, 2M+1]
	upper           [][]int32 // per node: [level, M+1], nil for level-0 nodes
	entry           int32
	top             int // level of entry
	rng             *rand.Rand
	pool            sync.Pool // *searcher
}

// NewHNSW builds a graph over row-major [n, dim] vecs (copied) with all
// cores, in insertion batches that are searched in parallel against the
// graph as it stood before the batch and linked in a fixed order, so the
// result does not depend on Workers or scheduling. Errors: cfg.Validate(),
// ErrDim, ctx.Err().
func NewHNSW(ctx context.Context, vecs []float32, dim int, cfg HNSWConfig) (*HNSW, error) {
	return newHNSW(ctx, vecs, dim, cfg, false)
}

// newHNSW is NewHNSW; with own it keeps vecs instead of copying it (the
// caller gives it up), saving one float32 copy of the corpus while building.
func newHNSW(ctx context.Context, vecs []float32, dim int, cfg HNSWConfig, own bool) (*HNSW, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dim <= 0 || len(vecs)%dim != 0 {
		return nil, fmt.Errorf("%w: %d values, dim %d", ErrDim, len(vecs), dim)
	}
	h := &HNSW{cfg: cfg.withDefaults(), dim: dim, entry: -1, rng: rand.New(rand.NewSource(cfg.Seed))}
	if h.cfg.Int8 {
		h.scale, h.offset = FitInt8(vecs, dim)
	}
	if err := h.add(ctx, vecs, own); err != nil {
		return nil, err
	}
	return h, nil
}

// Len is the number of vectors; Dim their dimension.
func (h *HNSW) Len() int { return h.n }

// Dim is the vector dimension.
func (h *HNSW) Dim() int { return h.dim }

// Config returns the configuration with defaults filled in.
func (h *HNSW) Config() HNSWConfig { return h.cfg }

// SetEfSearch changes the search candidate list size (≥ 1). Not safe
// while searches run.
func (h *HNSW) SetEfSearch(ef int) {
	if ef > 0 {
		h.cfg.EfSearch = ef
	}
}

func (h *HNSW) vec(i int32) []float32 { return h.vecs[int(i)*h.dim : (int(i)+1)*h.dim] }

// rowVec returns node i's vector: a view of vecs, or (after ShareVectors
// over an fp16/int8 shard) buf filled with the widened row.
func (h *HNSW) rowVec(i int32, buf []float32) []float32 {
	if h.vecs != nil {
		return h.vec(i)
	}
	if h.rr != nil {
		return h.rr.row(int(i), buf)
	}
	return h.src.widen(buf[:h.dim], int(i), int(i)+1)
}

// RerankOn makes h a compressed graph: traversal on its int8 codes (the
// graph must have been built with Int8, or shared over an int8 shard), and
// the final EfSearch candidates re-scored on r's fp16 rows (the same
// vectors, rounded to fp16; r is memory-mapped, so only the rows touched
// by re-ranking need to be resident). h drops its float32 vectors and its
// shard: resident memory becomes the codes (Dim bytes + 8·Dim once for the
// scales) plus the graph. Scores are q·fp16(x) accumulated in float32
// (recall@10 against float32 exact: ann/README.md). r must stay open while
// h searches. After RerankOn, Add and Save return errors. Not safe
// concurrently with Search. Errors: ErrDim when r's shape differs,
// ErrBadInput without int8 codes.
func (h *HNSW) RerankOn(r *FP16Rows) error { return h.rerankOn(r, true) }

// rerankOn is RerankOn; clone copies codes shared with an int8 shard (so
// that a caller who drops h's shard frees it), which Compress skips: a
// Flat is immutable, so sharing is safe, and the copy would double the
// codes' memory while both exist.
func (h *HNSW) rerankOn(r *FP16Rows, clone bool) error {
	if r.Len() != h.n || r.Dim() != h.dim {
		return fmt.Errorf("%w: fp16 rows are %d × %d, graph %d × %d", ErrDim, r.Len(), r.Dim(), h.n, h.dim)
	}
	if h.codes == nil {
		return fmt.Errorf("%w: ann: RerankOn needs a graph with int8 codes (HNSWConfig.Int8)", rlsearch.ErrBadInput)
	}
	if clone && h.src != nil && h.src.i8 != nil {
		// The codes are the shard's: copy them so that the shard can go.
		h.codes = slices.Clone(h.codes)
		h.scale, h.offset = slices.Clone(h.scale), slices.Clone(h.offset)
	}
	h.rr, h.vecs, h.src = r, nil, nil
	return nil
}

// ShareVectors makes h read its vectors from f, the shard it was built
// over (same Len and Dim; the caller guarantees the rows are the same
// vectors, possibly rounded to f's dtype), and drops h's own float32 copy:
// resident memory becomes f's storage (2 bytes per value for fp16, 1 for
// int8) plus the graph, instead of f plus 4 bytes per value. Over an int8
// shard, the shard's codes also replace h's traversal codes (h then holds
// no vector data at all). Re-ranking then scores the shard's values, which
// is exactly what flat search over f scores. After ShareVectors, Add
// returns an error; Search and Save work. Not safe concurrently with
// Search. Errors: ErrDim when f's shape differs.
func (h *HNSW) ShareVectors(f *Flat) error {
	if f.Len() != h.n || f.Dim() != h.dim {
		return fmt.Errorf("%w: vector file has %d × %d vectors, graph %d × %d", ErrDim, f.Len(), f.Dim(), h.n, h.dim)
	}
	h.src = f
	h.vecs = f.f32 // nil unless fp32: rows are widened from f
	if f.i8 != nil {
		h.codes, h.scale, h.offset = f.i8, f.h.Scale, f.h.Offset
		h.cfg.Int8 = true
	}
	return nil
}

// neighbours returns node i's adjacency at level l (a view).
func (h *HNSW) neighbours(i int32, l int) []int32 {
	if l == 0 {
		s := h.links0[int(i)*(2*h.cfg.M+1):]
		return s[1 : 1+s[0]]
	}
	s := h.upper[i][(l-1)*(h.cfg.M+1):]
	return s[1 : 1+s[0]]
}

func (h *HNSW) setNeighbours(i int32, l int, ids []int32) {
	var s []int32
	if l == 0 {
		s = h.links0[int(i)*(2*h.cfg.M+1):]
	} else {
		s = h.upper[i][(l-1)*(h.cfg.M+1):]
	}
	s[0] = int32(len(ids))
	copy(s[1:], ids)
}

func (h *HNSW) capacity(l int) int {
	if l == 0 {
		return 2 * h.cfg.M
	}
	return h.cfg.M
}

// randomLevel draws floor(-ln(U)·mL) with mL = 1/ln(M) (paper §4).
func (h *HNSW) randomLevel() uint8 {
	u := h.rng.Float64()
	for u == 0 {
		u = h.rng.Float64()
	}
	return uint8(min(maxLevel, int(-math.Log(u)/math.Log(float64(h.cfg.M)))))
}

// cand is a scored node.
type cand struct {
	id int32
	s  float32
}

// better orders by descending score, ties by ascending id.
func better(a, b cand) bool { return a.s > b.s || (a.s == b.s && a.id < b.id) }

// searcher holds per-goroutine scratch: a visited set stamped with a
// generation counter and the two heaps of the layer search.
type searcher struct {
	visited []uint32
	gen     uint32
	keys    []uint64 // the layer search's ef best as candKeys, best first
	pool    []cand   // the same, returned by searchLayer
	qcode   []float32
	qw      []int16   // the int16 query of the codes traversal
	isum    []int32   // integer row sums of one adjacency list
	ids     []int32   // one adjacency list's unvisited nodes, scored together
	sims    []float32 // their scores
	rids    []int32   // the ef candidates re-ranked (fp16 or fp32 rows)
	rsims   []float32 // their re-ranked scores
}

func (h *HNSW) getSearcher() *searcher {
	s, _ := h.pool.Get().(*searcher)
	if s == nil {
		s = &searcher{}
	}
	if len(s.visited) < h.n {
		s.visited = make([]uint32, h.n+h.n/4)
		s.gen = 0
	}
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	return s
}

// scorer computes query similarities: exact float32, or the int8 codes
// (q·(offset + scale∘c) = q·offset + (q∘scale)·c) scored as exact integer
// sums against q∘scale quantised to int16 (dotq.go): sim = qoff +
// alpha·Σ w_j·c_j, the same bits on every CPU.
type scorer struct {
	h     *HNSW
	q     []float32
	w     []int16 // q∘scale quantised, when codes
	alpha float32
	qoff  float32
	codes bool
	isum  []int32   // scratch for scoreRows on codes
	one   [1]int32  // score's id list on codes
	row   []float32 // scratch for rowVec, [dim]
}

// newScorer prepares q for scoring; with useCodes (and codes present) buf
// ([dim] float32) holds q∘scale and s's int16/int32 scratch the quantised
// query and row sums.
func (h *HNSW) newScorer(q []float32, useCodes bool, buf []float32, s *searcher) scorer {
	sc := scorer{h: h, q: q}
	if useCodes && h.codes != nil {
		sc.codes = true
		qs := buf[:h.dim]
		for j := range q {
			qs[j] = q[j] * h.scale[j]
			sc.qoff += q[j] * h.offset[j]
		}
		if cap(s.qw) < h.dim {
			s.qw = make([]int16, h.dim)
		}
		if c := 2*h.cfg.M + 1; cap(s.isum) < c {
			s.isum = make([]int32, c)
		}
		sc.w, sc.isum = s.qw[:h.dim], s.isum
		sc.alpha = quantizeI8Query(qs, sc.w)
	}
	return sc
}

// scoreRows sets out[j] = sc.score(ids[j]) for every j (bit for bit), in
// one kernel call over the in-memory codes or float32 rows, so that the
// next row's memory is fetched while the current one is scored.
func (sc *scorer) scoreRows(ids []int32, out []float32) {
	h := sc.h
	switch {
	case sc.codes:
		is := sc.isum[:len(ids)]
		dotRowsI8Q(sc.w, h.codes, ids, is)
		for j, v := range is {
			out[j] = scoreI8(sc.qoff, sc.alpha, v)
		}
	case h.vecs != nil:
		dotRowsF32(sc.q, h.vecs[:h.n*h.dim], ids, out)
	default:
		for j, id := range ids {
			out[j] = sc.score(id)
		}
	}
}

// scratch returns s.ids and s.sims with room for one adjacency list.
func (h *HNSW) scratch(s *searcher) ([]int32, []float32) {
	if c := 2*h.cfg.M + 1; cap(s.ids) < c {
		s.ids, s.sims = make([]int32, 0, c), make([]float32, c)
	}
	return s.ids[:0], s.sims
}

func (sc *scorer) score(i int32) float32 {
	h := sc.h
	if sc.codes {
		sc.one[0] = i
		dotRowsI8Q(sc.w, h.codes, sc.one[:], sc.isum[:1])
		return scoreI8(sc.qoff, sc.alpha, sc.isum[0])
	}
	return dotF32(sc.q, h.rowVec(i, sc.row))
}

// searchLayer is the paper's Algorithm 2: best-first search from eps at
// level l keeping the ef best; returns them sorted best first in s.pool
// (valid until the next call). limit excludes nodes ≥ limit (not yet linked).
func (h *HNSW) searchLayer(s *searcher, sc *scorer, eps []cand, ef, l int, limit int32) []cand {
	s.gen++
	if s.gen == 0 {
		clear(s.visited)
		s.gen = 1
	}
	// One array of the ef best seen, sorted best first, each with an
	// expanded flag (the paper's candidate and result sets in one: a
	// candidate not among the ef best is worse than the worst of them,
	// where the paper's search stops, so expanding the best unexpanded
	// entry of the array visits the same nodes in the same order and
	// returns the same set as two heaps would). Entries are packed keys
	// (candKey), so that an insertion is a branch-free binary search over
	// integers and one short copy.
	keys := s.keys[:0]
	next := 0 // no entry before next is unexpanded
	for _, e := range eps {
		if s.visited[e.id] == s.gen {
			continue
		}
		s.visited[e.id] = s.gen
		if k := candKey(e.id, e.s); len(keys) < ef || k > keys[len(keys)-1] {
			keys, _ = insertKey(keys, k, ef)
		}
	}
	for {
		for next < len(keys) && keys[next]&keyExpanded != 0 {
			next++
		}
		if next == len(keys) {
			break
		}
		id := keyID(keys[next])
		keys[next] |= keyExpanded
		// A list holds at most 2M ids (the [n, 2M+1] layout; loads and
		// imports check every count), so it fits scratch's 2M+1.
		ids, sims := h.scratch(s)
		ids = ids[:cap(ids)]
		n, gen, visited := 0, s.gen, s.visited
		for _, nb := range h.neighbours(id, l) {
			// Branch-free (whether a neighbour is new is a coin toss
			// for the branch predictor): every neighbour is written
			// and marked, and the count moves past the new ones that
			// are linked (< limit). Marking a node ≥ limit only skips
			// it in this call, where it is skipped anyway.
			v := visited[nb]
			visited[nb] = gen
			ids[n] = nb
			n += newNode(v != gen, nb < limit)
		}
		ids = ids[:n]
		sc.scoreRows(ids, sims)
		for j, nb := range ids {
			if k := candKey(nb, sims[j]); len(keys) < ef || k > keys[len(keys)-1] {
				var at int
				keys, at = insertKey(keys, k, ef)
				next = min(next, at)
			}
		}
	}
	s.keys = keys
	s.pool = s.pool[:0]
	for _, k := range keys {
		s.pool = append(s.pool, keyCand(k))
	}
	return s.pool
}

// newNode is 1 when both hold, else 0, as conditional moves.
func newNode(unseen, linked bool) int {
	a, b := 0, 0
	if unseen {
		a = 1
	}
	if linked {
		b = 1
	}
	return a & b
}

// keyExpanded is the flag bit of a pool key (candKey) whose node has been
// expanded; it is below the id bits, so it never changes the order of two
// keys of different nodes.
const keyExpanded = 1

// candKey packs a scored node into one integer that orders as better does
// (higher is better): the score's bits made monotone (sign bit set for
// s ≥ +0, all bits flipped for s < 0, so -0 sorts just below +0, the one
// difference from better's float comparison), then MaxInt32 - id (ties to
// the lower id), then the expanded flag, 0.
func candKey(id int32, s float32) uint64 {
	b := math.Float32bits(s)
	b ^= uint32(int32(b)>>31) | 1<<31
	return uint64(b)<<32 | uint64(math.MaxInt32-id)<<1
}

// keyID is the node of a candKey.
func keyID(k uint64) int32 { return math.MaxInt32 - int32(uint32(k)>>1) }

// keyCand unpacks a candKey (the score bit for bit).
func keyCand(k uint64) cand {
	b := uint32(k >> 32)
	b ^= uint32(int32(^b)>>31) | 1<<31
	return cand{keyID(k), math.Float32frombits(b)}
}

// insertKey puts k into keys (sorted descending, at most ef long; when
// full the caller has checked that k beats the last, which is dropped) and
// returns the keys and k's position. The search for the position is free
// of data-dependent branches (a halving lower bound with conditional moves).
func insertKey(keys []uint64, k uint64, ef int) ([]uint64, int) {
	base, n := 0, len(keys)
	for n > 1 {
		half := n >> 1
		// borrow is 1 exactly when keys[base+half-1] > k (SBB).
		_, borrow := bits.Sub64(k, keys[base+half-1], 0)
		base += half & -int(borrow)
		n -= half
	}
	if n == 1 {
		_, borrow := bits.Sub64(k, keys[base], 0)
		base += int(borrow)
	}
	if len(keys) < ef {
		keys = append(keys, 0)
	}
	copy(keys[base+1:], keys[base:])
	keys[base] = k
	return keys, base
}

// greedy descends from the entry point to level stop+1 following the best
// neighbour (the paper's search with ef = 1).
func (h *HNSW) greedy(s *searcher, sc *scorer, from int, stop int, limit int32) cand {
	cur := cand{h.entry, sc.score(h.entry)}
	for l := from; l > stop; l-- {
		for changed := true; changed; {
			changed = false
			// Score the node's neighbours in one kernel call (scoreRows
			// equals score bit for bit), then walk them in list order.
			ids, sims := h.scratch(s)
			for _, nb := range h.neighbours(cur.id, l) {
				if nb < limit {
					ids = append(ids, nb)
				}
			}
			sc.scoreRows(ids, sims)
			for j, nb := range ids {
				if c := (cand{nb, sims[j]}); better(c, cur) {
					cur, changed = c, true
				}
			}
		}
	}
	return cur
}

func pushMax(hp []cand, c cand) []cand {
	hp = append(hp, c)
	i := len(hp) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !better(hp[i], hp[p]) {
			break
		}
		hp[i], hp[p] = hp[p], hp[i]
		i = p
	}
	return hp
}

func popMax(hp []cand) (cand, []cand) {
	top := hp[0]
	n := len(hp) - 1
	hp[0] = hp[n]
	hp = hp[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && better(hp[r], hp[l]) {
			m = r
		}
		if !better(hp[m], hp[i]) {
			break
		}
		hp[i], hp[m] = hp[m], hp[i]
		i = m
	}
	return top, hp
}

// pushMin keeps the ef best in a min-heap (worst on top).
func pushMin(hp []cand, c cand, ef int) []cand {
	if len(hp) < ef {
		hp = append(hp, c)
		i := len(hp) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !better(hp[p], hp[i]) {
				break
			}
			hp[i], hp[p] = hp[p], hp[i]
			i = p
		}
		return hp
	}
	if !better(c, hp[0]) {
		return hp
	}
	hp[0] = c
	n := len(hp)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && better(hp[l], hp[r]) {
			m = r
		}
		if !better(hp[i], hp[m]) {
			break
		}
		hp[i], hp[m] = hp[m], hp[i]
		i = m
	}
	return hp
}

// selectNeighbours is the paper's Algorithm 4 heuristic: candidates in
// descending score; keep c when it is closer to the base than to every
// node kept so far (q·c ≥ c·s), up to m. Where that keeps fewer than
// min(m, M), the best pruned candidates fill the list up to it (the
// paper's keepPrunedConnections, capped; hnswlib and faiss keep none).
// Measured on the fp32 graph, M 16, efConstruction 100, as score
// computations per query at equal recall@10 (2026-12-03): Fashion-MNIST
// 0.9947 at 457 without the fill against 355 with it, 0.9973 at 707
// against 515; bge-base and SIFT within ±5% at equal ef with recall equal
// or higher; build time unchanged. Filling to 2M (the level-0 capacity)
// was worse on Fashion-MNIST.
func (h *HNSW) selectNeighbours(cands []cand, m int) []int32 {
	slices.SortFunc(cands, func(a, b cand) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	out := make([]int32, 0, m)
	for _, c := range cands {
		if len(out) == m {
			break
		}
		ok := true
		cv := h.vec(c.id)
		for _, s := range out {
			if dotF32(cv, h.vec(s)) > c.s {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, c.id)
		}
	}
	if f := min(m, h.cfg.M); len(out) < f {
		for _, c := range cands {
			if len(out) == f {
				break
			}
			if !slices.Contains(out, c.id) {
				out = append(out, c.id)
			}
		}
	}
	return out
}

// Add inserts row-major [n, Dim] vectors (copied); they get rows Len()..
// Len()+n-1. With Int8 their codes use the scale/offset fitted by NewHNSW,
// clamped to [-128, 127] (re-ranking stays exact in float32). Each call
// ends with one O(n·M) pass over the whole graph (connect), so add in
// large batches. Not safe concurrently with Search. Errors: ErrDim, ctx.Err()
// (the graph then holds the vectors inserted so far).
func (h *HNSW) Add(ctx context.Context, vecs []float32) error {
	return h.add(ctx, vecs, false)
}

func (h *HNSW) add(ctx context.Context, vecs []float32, own bool) error {
	d := h.dim
	if len(vecs)%d != 0 {
		return fmt.Errorf("%w: %d values is not a multiple of dim %d", ErrDim, len(vecs), d)
	}
	add := len(vecs) / d
	if h.src != nil || h.rr != nil {
		return errors.New("ann: Add after ShareVectors or RerankOn: the graph no longer owns its vectors (build from the float32 vectors, then share)")
	}
	if h.n+add > math.MaxInt32 {
		return fmt.Errorf("%w: ann: %d vectors exceed the int32 row limit", rlsearch.ErrBadInput, h.n+add)
	}
	start := h.n
	total := start + add
	if own && len(h.vecs) == 0 {
		h.vecs = vecs
	} else {
		h.vecs = append(h.vecs, vecs...)
	}
	if h.scale != nil {
		codes := make([]int8, len(vecs))
		encodeI8(codes, vecs, h.scale, h.offset)
		h.codes = append(h.codes, codes...)
	}
	m0 := 2*h.cfg.M + 1
	h.links0 = append(h.links0, make([]int32, add*m0)...)
	for i := 0; i < add; i++ {
		lv := h.randomLevel()
		h.level = append(h.level, lv)
		var up []int32
		if lv > 0 {
			up = make([]int32, int(lv)*(h.cfg.M+1))
		}
		h.upper = append(h.upper, up)
	}
	workers := h.cfg.Workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	next := start
	if h.entry < 0 && add > 0 {
		h.entry, h.top = int32(start), int(h.level[start])
		next++
		h.n = next
	}
	sel := make([][][]int32, 0, 256)
	for next < total {
		if err := ctx.Err(); err != nil {
			h.truncate(next)
			return err
		}
		// Batch size: a quarter of the graph so far, 1..256, so that early
		// nodes are not inserted blind (each also sees the batch's earlier
		// nodes by brute force).
		b := min(total-next, max(1, min(256, next/4)))
		sel = sel[:b]
		h.n = next + b // searcher sizes; nodes ≥ next are excluded by limit
		var wg sync.WaitGroup
		var mu sync.Mutex
		nextJob := 0
		for w := 0; w < min(workers, b); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := h.getSearcher()
				defer h.pool.Put(s)
				for {
					mu.Lock()
					j := nextJob
					nextJob++
					mu.Unlock()
					if j >= b {
						return
					}
					sel[j] = h.findNeighbours(s, int32(next+j), int32(next))
				}
			}()
		}
		wg.Wait()
		h.link(sel, int32(next), workers)
		for j := 0; j < b; j++ {
			if v := next + j; int(h.level[v]) > h.top {
				h.entry, h.top = int32(v), int(h.level[v])
			}
		}
		next += b
		if h.cfg.Progress != nil {
			h.cfg.Progress(next-start, add)
		}
	}
	h.n = total
	h.connect()
	return nil
}

// connect links every node that level 0 cannot reach from the entry point
// into it, so that no row is lost to the index: the pruning
// heuristic can drop a node's last in-link (exact duplicates leave 7 of
// Fashion-MNIST's 10,000 rows without a level-0 in-link otherwise). Nodes
// are visited in ascending row order; an unreachable node v is searched
// for at level 0 (efConstruction) and appended to the list of the best
// reachable node found with room, or, where every list found is full,
// written over the entry of the best one's list that has the most
// in-links (when it has at least two; otherwise v stays unlinked). Then
// what v reaches becomes reachable too. One pass over the
// links (O(n·M)) per NewHNSW or Add; deterministic.
func (h *HNSW) connect() {
	if h.n == 0 {
		return
	}
	seen := make([]bool, h.n)
	stack := h.markReachable(seen, h.entry, nil)
	var in []int32 // level-0 in-degrees, counted at the first unreachable node
	s := h.getSearcher()
	defer h.pool.Put(s)
	for v := int32(0); v < int32(h.n); v++ {
		if seen[v] {
			continue
		}
		if in == nil {
			in = make([]int32, h.n)
			for u := range int32(h.n) {
				for _, w := range h.neighbours(u, 0) {
					in[w]++
				}
			}
		}
		sc := scorer{h: h, q: h.vec(v)}
		ep := h.greedy(s, &sc, h.top, 0, int32(h.n))
		found := h.searchLayer(s, &sc, []cand{ep}, h.cfg.EfConstruction, 0, int32(h.n))
		// The search starts where the upper levels lead, which level 0 may
		// not reach from the entry: only nodes already seen count.
		room := slices.IndexFunc(found, func(c cand) bool { return seen[c.id] && len(h.neighbours(c.id, 0)) < h.capacity(0) })
		if room >= 0 {
			to := found[room].id
			h.setNeighbours(to, 0, append(slices.Clone(h.neighbours(to, 0)), v))
		} else {
			best := slices.IndexFunc(found, func(c cand) bool { return seen[c.id] })
			if best < 0 {
				continue // nothing reachable found: v stays unlinked
			}
			nb := h.neighbours(found[best].id, 0)
			at := 0
			for j, w := range nb {
				if in[w] > in[nb[at]] {
					at = j
				}
			}
			if in[nb[at]] < 2 {
				continue // overwriting would strand that node instead
			}
			in[nb[at]]--
			nb[at] = v
		}
		in[v]++
		stack = h.markReachable(seen, v, stack)
	}
}

// markReachable sets seen for v and every node level 0 reaches from it
// (depth first, stack as scratch, returned for reuse).
func (h *HNSW) markReachable(seen []bool, v int32, stack []int32) []int32 {
	seen[v] = true
	stack = append(stack[:0], v)
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range h.neighbours(u, 0) {
			if !seen[w] {
				seen[w] = true
				stack = append(stack, w)
			}
		}
	}
	return stack
}

// truncate drops nodes ≥ n after a cancelled Add (their links were never
// made; links to them exist only from nodes ≥ n).
func (h *HNSW) truncate(n int) {
	h.n = n
	h.vecs = h.vecs[:n*h.dim]
	if h.codes != nil {
		h.codes = h.codes[:n*h.dim]
	}
	h.level = h.level[:n]
	h.upper = h.upper[:n]
	h.links0 = h.links0[:n*(2*h.cfg.M+1)]
}

// findNeighbours searches the graph of nodes < limit for node v's
// neighbours on each of its levels, adding the batch's earlier nodes
// [limit, v) by brute force. Read-only on the graph.
func (h *HNSW) findNeighbours(s *searcher, v, limit int32) [][]int32 {
	lv := int(h.level[v])
	sc := scorer{h: h, q: h.vec(v)}
	out := make([][]int32, lv+1)
	var eps []cand
	if h.top > lv {
		eps = []cand{h.greedy(s, &sc, h.top, lv, limit)}
	} else {
		eps = []cand{{h.entry, sc.score(h.entry)}}
	}
	ef := h.cfg.EfConstruction
	for l := min(lv, h.top); l >= 0; l-- {
		res := slices.Clone(h.searchLayer(s, &sc, eps, ef, l, limit))
		eps = res
		cands := slices.Clone(res)
		for u := limit; u < v; u++ {
			if int(h.level[u]) >= l {
				cands = append(cands, cand{u, sc.score(u)})
			}
		}
		out[l] = h.selectNeighbours(cands, h.capacity(l))
	}
	// Levels above the current top only link within the batch.
	for l := h.top + 1; l <= lv; l++ {
		var cands []cand
		for u := limit; u < v; u++ {
			if int(h.level[u]) >= l {
				cands = append(cands, cand{u, sc.score(u)})
			}
		}
		out[l] = h.selectNeighbours(cands, h.cfg.M)
	}
	return out
}

// link writes the batch's own lists, then adds the reverse links, grouped
// by target node and applied in batch order; a list over capacity is
// pruned with the heuristic. Groups run in parallel (each owns its node).
func (h *HNSW) link(sel [][][]int32, base int32, workers int) {
	type req struct {
		target int32
		l      int
		from   int32
	}
	var reqs []req
	for j, lists := range sel {
		v := base + int32(j)
		for l, ids := range lists {
			h.setNeighbours(v, l, ids)
			for _, u := range ids {
				reqs = append(reqs, req{u, l, v})
			}
		}
	}
	slices.SortStableFunc(reqs, func(a, b req) int {
		if a.target != b.target {
			return int(a.target - b.target)
		}
		return a.l - b.l
	})
	var groups [][2]int
	for i := 0; i < len(reqs); {
		j := i
		for j < len(reqs) && reqs[j].target == reqs[i].target && reqs[j].l == reqs[i].l {
			j++
		}
		groups = append(groups, [2]int{i, j})
		i = j
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < min(workers, len(groups)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []int32
			for {
				mu.Lock()
				g := next
				next++
				mu.Unlock()
				if g >= len(groups) {
					return
				}
				rs := reqs[groups[g][0]:groups[g][1]]
				u, l := rs[0].target, rs[0].l
				buf = append(buf[:0], h.neighbours(u, l)...)
				for _, r := range rs {
					if !slices.Contains(buf, r.from) {
						buf = append(buf, r.from)
					}
				}
				if c := h.capacity(l); len(buf) > c {
					uv := h.vec(u)
					cands := make([]cand, len(buf))
					for i, id := range buf {
						cands[i] = cand{id, dotF32(uv, h.vec(id))}
					}
					buf = append(buf[:0], h.selectNeighbours(cands, c)...)
				}
				h.setNeighbours(u, l, buf)
			}
		}()
	}
	wg.Wait()
}

// Search returns, for each query, up to k rows by descending inner product
// (ties by ascending row), found by the graph: approximate, with recall set
// by EfSearch (raised to k). With Int8 the candidates found on codes are
// re-scored with float32 vectors. q is row-major [nq, Dim()]; queries run
// in parallel over GOMAXPROCS goroutines; the result is owned by the
// caller. Safe for concurrent use. Errors: ErrDim, ErrBadInput (k < 0),
// ctx.Err().
func (h *HNSW) Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error) {
	d := h.dim
	if len(q)%d != 0 {
		return nil, fmt.Errorf("%w: query length %d is not a multiple of dim %d", ErrDim, len(q), d)
	}
	ks := make([]int, len(q)/d)
	for i := range ks {
		ks[i] = k
	}
	return h.searchWidths(ctx, q, ks)
}

// searchWidths searches row i of q with its own width ks[i] (and so its
// own candidate list, max(EfSearch, ks[i])): each list is what Search of
// that row alone at that width returns (SearchWidths).
func (h *HNSW) searchWidths(ctx context.Context, q []float32, ks []int) ([][]rlsearch.Hit, error) {
	d := h.dim
	if len(q)%d != 0 || len(q)/d != len(ks) {
		return nil, fmt.Errorf("%w: query length %d is not %d queries × dim %d", ErrDim, len(q), len(ks), d)
	}
	for _, k := range ks {
		if k < 0 {
			return nil, fmt.Errorf("%w: ann: k = %d must be ≥ 0", rlsearch.ErrBadInput, k)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if h.closed {
		return nil, errors.New("ann: HNSW search after Close")
	}
	nq := len(ks)
	out := make([][]rlsearch.Hit, nq)
	workers := min(runtime.GOMAXPROCS(0), nq)
	if workers <= 1 {
		s := h.getSearcher()
		for i := range out {
			out[i] = h.searchOne(s, q[i*d:(i+1)*d], ks[i])
		}
		h.pool.Put(s)
		return out, ctx.Err()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := h.getSearcher()
			defer h.pool.Put(s)
			for ctx.Err() == nil {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= nq {
					return
				}
				out[i] = h.searchOne(s, q[i*d:(i+1)*d], ks[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func (h *HNSW) searchOne(s *searcher, q []float32, k int) []rlsearch.Hit {
	if k == 0 || h.n == 0 {
		return []rlsearch.Hit{}
	}
	if cap(s.qcode) < 2*h.dim {
		s.qcode = make([]float32, 2*h.dim)
	}
	sc := h.newScorer(q, true, s.qcode[:h.dim], s)
	sc.row = s.qcode[h.dim : 2*h.dim]
	ef := max(h.cfg.EfSearch, k)
	ep := h.greedy(s, &sc, h.top, 0, int32(h.n))
	res := h.searchLayer(s, &sc, []cand{ep}, ef, 0, int32(h.n))
	hits := make([]rlsearch.Hit, len(res))
	if sc.codes && (h.rr != nil || h.vecs != nil) {
		// Re-rank in one call: on the mapped fp16 rows (converted in
		// registers, next row prefetched), as dotF32 of the widened rows,
		// or on the float32 rows (dotRowsF32 equals dotF32 bit for bit,
		// see scoreRows).
		if cap(s.rids) < len(res) {
			s.rids, s.rsims = make([]int32, len(res)), make([]float32, len(res))
		}
		ids, sims := s.rids[:len(res)], s.rsims[:len(res)]
		for i, c := range res {
			ids[i] = c.id
		}
		if h.rr != nil {
			dotRowsF16(q, h.rr.rows, ids, sims)
		} else {
			dotRowsF32(q, h.vecs[:h.n*h.dim], ids, sims)
		}
		for i, c := range res {
			hits[i] = rlsearch.Hit{Row: c.id, Score: sims[i]}
		}
	} else {
		for i, c := range res {
			sim := c.s
			if sc.codes {
				sim = dotF32(q, h.rowVec(c.id, sc.row))
			}
			hits[i] = rlsearch.Hit{Row: c.id, Score: sim}
		}
	}
	return bestHits(hits, k)
}

// bestHits returns the first k of hits in cmpHit order, as sorting and
// truncating would: for small k by insertion into hits[:k] (one pass, a
// comparison per hit that does not enter), else by sorting.
func bestHits(hits []rlsearch.Hit, k int) []rlsearch.Hit {
	if k == 0 || k > 32 || 4*k >= len(hits) {
		slices.SortFunc(hits, cmpHit)
		return hits[:min(k, len(hits))]
	}
	m := 0 // hits[:m] holds the best m seen, in order; m ≤ i
	for i := range hits {
		x := hits[i]
		if m == k && !rlsearch.Less(x, hits[k-1]) {
			continue
		}
		j := m
		if m < k {
			m++
		} else {
			j = k - 1 // the worst kept goes
		}
		for j > 0 && rlsearch.Less(x, hits[j-1]) {
			hits[j] = hits[j-1]
			j--
		}
		hits[j] = x
	}
	return hits[:m]
}

// MemoryBytes reports the bytes held by vectors, codes and graph; after
// ShareVectors the shard's storage is not counted (vectors is 0, and codes
// is 0 over an int8 shard); after RerankOn the mapped fp16 rows are not
// counted (vectors is 0).
func (h *HNSW) MemoryBytes() (vectors, codes, graph int) {
	if h.rr != nil {
		codes = len(h.codes) + 8*len(h.scale)
	} else if h.src == nil {
		vectors = 4 * len(h.vecs)
		codes = len(h.codes) + 8*len(h.scale)
	} else if h.src.i8 == nil {
		codes = len(h.codes) + 8*len(h.scale)
	}
	graph = 4*len(h.links0) + len(h.level) + 24*len(h.upper)
	for _, u := range h.upper {
		graph += 4 * len(u)
	}
	return vectors, codes, graph
}
