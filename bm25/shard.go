package bm25

import (
	"errors"
	"fmt"
	"math"
)

// ErrShardPlan is wrapped by the errors for a bad ShardPlan and for rows
// or paths that do not fit the plan of a shard builder.
var ErrShardPlan = errors.New("bm25: bad shard plan")

// MaxShards bounds ShardPlan's shard count: a shard builder keeps four
// temporary side files and their buffers open per written shard.
const MaxShards = 1024

// ShardPlan splits the rows of a corpus into contiguous shards, for
// NewShardBuilder.
type ShardPlan struct {
	// Bounds holds the first row of every shard and, last, the number of
	// rows: shard i is rows [Bounds[i], Bounds[i+1]). Bounds[0] is 0 and
	// the values strictly increase (no empty shard); 2 to MaxShards+1
	// values. EvenBounds makes an even split.
	Bounds []int32
	// Keep says which shards WriteShards writes: nil means all of them,
	// else one entry per shard, at least one true. The rows of a shard
	// not kept are analyzed for the corpus-wide statistics only (their
	// lengths, and one count per distinct term): none of their postings
	// is held or spilled, so building one shard of N on its own machine
	// needs about 1/N of the memory and disk of the postings.
	Keep []bool
}

// EvenBounds returns the Bounds of n shards of rows rows split as evenly
// as possible: shard i starts at row ⌊rows·i/n⌋. It fails with
// ErrShardPlan unless 1 <= n <= min(rows, MaxShards) and rows <=
// math.MaxInt32.
func EvenBounds(rows, n int) ([]int32, error) {
	if n < 1 || n > MaxShards || rows < n || rows > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d shards of %d rows (want 1 to %d shards, at most one per row)", ErrShardPlan, n, rows, MaxShards)
	}
	b := make([]int32, n+1)
	for i := range b {
		b[i] = int32(int64(rows) * int64(i) / int64(n))
	}
	return b, nil
}

// Validate reports what is wrong with the plan, wrapping ErrShardPlan.
func (p ShardPlan) Validate() error {
	n := len(p.Bounds) - 1
	if n < 1 || n > MaxShards {
		return fmt.Errorf("%w: %d bounds, want 2 to %d (the first row of each shard, then the number of rows)", ErrShardPlan, len(p.Bounds), MaxShards+1)
	}
	if p.Bounds[0] != 0 {
		return fmt.Errorf("%w: Bounds[0] = %d, want 0", ErrShardPlan, p.Bounds[0])
	}
	for i := 1; i <= n; i++ {
		if p.Bounds[i] <= p.Bounds[i-1] {
			return fmt.Errorf("%w: Bounds[%d] = %d is not above Bounds[%d] = %d (shards must hold at least one row)", ErrShardPlan, i, p.Bounds[i], i-1, p.Bounds[i-1])
		}
	}
	if p.Keep != nil {
		if len(p.Keep) != n {
			return fmt.Errorf("%w: Keep has %d entries for %d shards", ErrShardPlan, len(p.Keep), n)
		}
		some := false
		for _, k := range p.Keep {
			some = some || k
		}
		if !some {
			return fmt.Errorf("%w: Keep writes no shard", ErrShardPlan)
		}
	}
	return nil
}

// Shards is the number of shards.
func (p *ShardPlan) Shards() int { return len(p.Bounds) - 1 }

func (p *ShardPlan) keep(i int) bool { return p.Keep == nil || p.Keep[i] }

// NewShardBuilder returns a Builder for a corpus split by plan into
// shards: every row of the corpus is added (Add, in corpus order, exactly
// plan.Bounds[last] of them) and WriteShards writes one file per kept
// shard. Each shard file holds its own rows (row 0 is the shard's first
// row) and records the corpus-wide statistics, computed once over all the
// rows: the document count, the total of the document lengths (so avgdl)
// and every term's document frequency (FlagShard, see FORMAT). Its scores
// are therefore those of one index over the whole corpus, bit for bit, and
// the top k of the whole corpus are the top k of the shards' top-k lists
// merged by descending score, ties by ascending corpus row (the shard's
// first row plus the hit's row; see Index.Shard).
//
// The file of a shard does not depend on which other shards are kept,
// nor on MemoryBudget or Workers. Errors: ErrConfig, ErrShardPlan.
func NewShardBuilder(cfg Config, plan ShardPlan) (*Builder, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	bd, err := NewBuilder(cfg)
	if err != nil {
		return nil, err
	}
	p := ShardPlan{Bounds: append([]int32(nil), plan.Bounds...)}
	if plan.Keep != nil {
		p.Keep = append([]bool(nil), plan.Keep...)
	}
	bd.plan = &p
	return bd, nil
}

// WriteShards merges the runs and writes the file of every kept shard,
// streaming: paths[i] is shard i's file, "" for each shard not kept. It
// fails with ErrShardPlan when fewer rows were added than the plan holds
// or paths does not match it. Each file is written as WriteFile writes
// one (temporary file, sync, rename); on error none of the files that were
// not yet complete is published (those complete stay). The Builder is
// finished afterwards.
func (bd *Builder) WriteShards(paths []string) error {
	p := bd.plan
	if p == nil {
		return fmt.Errorf("%w: WriteShards needs a builder from NewShardBuilder", ErrShardPlan)
	}
	n := p.Shards()
	if len(paths) != n {
		bd.Abort()
		return fmt.Errorf("%w: %d paths for %d shards", ErrShardPlan, len(paths), n)
	}
	for i, path := range paths {
		if (path != "") != p.keep(i) {
			bd.Abort()
			return fmt.Errorf("%w: shard %d: path %q, but the plan keeps it: %v", ErrShardPlan, i, path, p.keep(i))
		}
	}
	srcs, done, err := bd.finish()
	if err != nil {
		return err
	}
	defer done()
	if rows := int32(len(bd.docLens)); rows != p.Bounds[n] {
		return fmt.Errorf("%w: %d rows added, the plan holds %d", ErrShardPlan, rows, p.Bounds[n])
	}
	var st lengthStats
	for _, dl := range bd.docLens {
		st.add(dl)
	}
	g := globalStats{totalRows: uint32(p.Bounds[n]), docCount: st.docCount, sumTF: st.sumTF}
	kept := 0
	for i := range n {
		if p.keep(i) {
			kept++
		}
	}
	// Buffers: 1 MiB per stream for one shard, less for many (5 streams
	// per file), at least 64 KiB.
	buf := max(64<<10, (4<<20)/kept)
	files := make([]*indexFile, n)
	defer func() {
		for _, x := range files {
			if x != nil {
				x.abort()
			}
		}
	}()
	for i, path := range paths {
		if path == "" {
			continue
		}
		gi := g
		gi.firstRow = uint32(p.Bounds[i])
		if files[i], err = createIndexFile(path, bd.tempDir, bd.k1, bd.b, bd.docLens[p.Bounds[i]:p.Bounds[i+1]], &gi, buf); err != nil {
			return err
		}
	}
	sink := &shardSink{bounds: p.Bounds, files: files}
	if err := merge(srcs, sink); err != nil {
		return fmt.Errorf("bm25: write shards: %w", err)
	}
	for i, x := range files {
		if x == nil {
			continue
		}
		files[i] = nil
		if err := x.finish(); err != nil {
			return err
		}
	}
	return nil
}

// shardSink routes each posting to the file of the shard that holds its
// row, rebased to the shard's first row. A term is begun in a shard's file
// at its first posting there, with the corpus-wide df (postings plus the
// rows of unwritten shards), so a shard without the term never lists it.
type shardSink struct {
	bounds []int32
	files  []*indexFile
	term   []byte
	df     uint64 // postings of the current term (all written shards)
	gdf    uint64 // its corpus-wide df
	n      uint64 // postings routed so far
	cur    int    // shard of the last posting
	begun  []int  // shards the current term was begun in
}

func (s *shardSink) beginTerm(term []byte, df, xdf uint64) error {
	s.term = append(s.term[:0], term...)
	s.df, s.gdf, s.n, s.cur = df, df+xdf, 0, 0
	s.begun = s.begun[:0]
	return nil
}

func (s *shardSink) add(row int32, tf uint32) error {
	for s.cur+1 < len(s.bounds)-1 && row >= s.bounds[s.cur+1] {
		s.cur++
	}
	x := s.files[s.cur]
	if x == nil || row < s.bounds[s.cur] || row >= s.bounds[s.cur+1] {
		return fmt.Errorf("bm25: term %q: posting of row %d outside the written shards (internal error)", s.term, row)
	}
	if n := len(s.begun); n == 0 || s.begun[n-1] != s.cur {
		if err := x.w.begin(s.term, s.gdf); err != nil {
			return err
		}
		s.begun = append(s.begun, s.cur)
	}
	s.n++
	return x.w.add(row-s.bounds[s.cur], tf)
}

func (s *shardSink) endTerm() error {
	if s.n != s.df {
		return fmt.Errorf("bm25: term %q has %d postings, runs said %d (internal error)", s.term, s.n, s.df)
	}
	for _, i := range s.begun {
		if err := s.files[i].w.end(); err != nil {
			return err
		}
	}
	return nil
}
