package ann

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rlsearch/rlsearch/ann/vecfile"
)

// ImportedHNSW is an HNSW graph built by another library over the rows of
// a shard, such as the graph of a faiss IndexHNSWFlat (vecfile.Graph),
// given node by node so that it is never held whole: node i is row i of
// the shard it will serve over.
type ImportedHNSW struct {
	// N is the number of nodes, Dim the vector dimension (they must equal
	// the shard's when the graph is loaded).
	N, Dim int
	// M is the capacity of every level above 0; level 0 holds up to 2·M
	// (faiss's default layout and this package's). 2..256.
	M int
	// EfConstruction is recorded; EfSearch is the default candidate list
	// size of searches (both ≥ 1; faiss's defaults are 40 and 16).
	EfConstruction, EfSearch int
	// Entry is the entry point, a node on the top level (-1 when N is 0).
	Entry int32
	// Levels holds each node's top level (0..31), len N. The entry point
	// must be on the highest.
	Levels []uint8
	// Neighbours appends node's neighbours on level (0..Levels[node]) to dst
	// and returns it. It is called for every node in increasing order,
	// level 0 first, then for the nodes above level 0 in increasing order
	// and their levels in increasing order.
	Neighbours func(dst []int32, node int32, level int) ([]int32, error)
	// Progress, when set, is called after every 4,096 nodes of level 0 with
	// the nodes written so far and N.
	Progress func(done, total int)
}

// SaveImportedHNSW writes g to path atomically as a graph file without a
// vector section (FORMAT.md, flag bit 2): LoadHNSWShared serves it over
// the shard whose rows are its nodes, and LoadHNSW refuses it
// (ErrSharedGraph). Memory: one block of 4,096 nodes' adjacency, whatever
// N. Every list is checked as it is read: at most the level's capacity,
// every neighbour a node present on that level; a bad graph is refused
// with an error wrapping ErrCorrupt that names the node and level, and
// nothing is written. Errors: also g.Neighbours' and ctx.Err().
func SaveImportedHNSW(ctx context.Context, path string, g ImportedHNSW) error {
	cfg := HNSWConfig{M: g.M, EfConstruction: g.EfConstruction, EfSearch: g.EfSearch}
	switch {
	case g.M < 2 || g.M > 256:
		return fmt.Errorf("%w: imported graph: M = %d, want 2..256", ErrCorrupt, g.M)
	case g.EfConstruction < 1 || g.EfSearch < 1 || g.EfConstruction > 1<<20 || g.EfSearch > 1<<20:
		return fmt.Errorf("%w: imported graph: efConstruction %d, efSearch %d, want 1..%d", ErrCorrupt, g.EfConstruction, g.EfSearch, 1<<20)
	case g.N < 0 || g.N > math.MaxInt32 || len(g.Levels) != g.N:
		return fmt.Errorf("%w: imported graph: %d nodes with %d levels", ErrCorrupt, g.N, len(g.Levels))
	case g.Dim < 1 || g.Dim > maxDim:
		return fmt.Errorf("%w: imported graph: dim %d, want 1..%d", ErrCorrupt, g.Dim, maxDim)
	case (g.N == 0) != (g.Entry < 0) || int(g.Entry) >= g.N:
		return fmt.Errorf("%w: imported graph: entry point %d for %d nodes", ErrCorrupt, g.Entry, g.N)
	}
	top := 0
	if g.N > 0 {
		top = int(g.Levels[g.Entry])
	}
	for v, l := range g.Levels {
		if int(l) > top || int(l) > maxLevel {
			return fmt.Errorf("%w: imported graph: node %d has level %d, above the entry point's %d (or %d)", ErrCorrupt, v, l, top, maxLevel)
		}
	}
	return writeGraphFile(path, func(bw *bufio.Writer) error { return g.write(ctx, bw, cfg, top) })
}

// write writes the whole imported graph file to bw (SaveImportedHNSW).
func (g ImportedHNSW) write(ctx context.Context, bw *bufio.Writer, cfg HNSWConfig, top int) error {
	if _, err := bw.Write(hnswHeader(cfg, g.N, g.Dim, g.Entry, top, hnswFlagShared)); err != nil {
		return err
	}
	gw, err := newGraphWriter(bw, false)
	if err != nil {
		return err
	}
	if err := gw.writeChunks(tagLevels, g.Levels, 1, 1); err != nil {
		return err
	}
	// list reads node's list on level l into rec (count, then ids, then
	// zero slots up to capacity c) after checking it.
	var nb []int32
	list := func(rec []byte, node int32, l, c int) error {
		var lerr error
		if nb, lerr = g.Neighbours(nb[:0], node, l); lerr != nil {
			return fmt.Errorf("imported graph node %d level %d: %w", node, l, lerr)
		}
		if len(nb) > c {
			return fmt.Errorf("%w: imported graph: node %d level %d has %d neighbours, capacity %d", ErrCorrupt, node, l, len(nb), c)
		}
		le := binary.LittleEndian
		le.PutUint32(rec, uint32(len(nb)))
		for i := range c {
			var id int32
			if i < len(nb) {
				id = nb[i]
				if id < 0 || int(id) >= g.N || int(g.Levels[id]) < l {
					return fmt.Errorf("%w: imported graph: node %d level %d links to %d, not a node on that level", ErrCorrupt, node, l, id)
				}
			}
			le.PutUint32(rec[4+4*i:], uint32(id))
		}
		return nil
	}
	m0 := 2*g.M + 1
	buf := make([]byte, graphBlockRows*4*max(m0, g.M+2))
	for lo := 0; lo < g.N; lo += graphBlockRows {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+graphBlockRows, g.N)
		for v := lo; v < hi; v++ {
			if err := list(buf[(v-lo)*4*m0:], int32(v), 0, 2*g.M); err != nil {
				return err
			}
		}
		if err := gw.flushBlock(tagLinks0, buf[:(hi-lo)*4*m0], hi-lo, 4); err != nil {
			return err
		}
		if g.Progress != nil {
			g.Progress(hi, g.N)
		}
	}
	rec, recBytes := 0, 4*(g.M+2)
	for v := 0; v < g.N; v++ {
		for l := 1; l <= int(g.Levels[v]); l++ {
			r := buf[rec*recBytes:]
			binary.LittleEndian.PutUint32(r, uint32(v))
			if err := list(r[4:], int32(v), l, g.M); err != nil {
				return err
			}
			if rec++; rec == graphBlockRows {
				if err := gw.flushBlock(tagUpper, buf[:rec*recBytes], rec, 4); err != nil {
					return err
				}
				rec = 0
			}
		}
	}
	if rec > 0 {
		if err := gw.flushBlock(tagUpper, buf[:rec*recBytes], rec, 4); err != nil {
			return err
		}
	}
	_, err = bw.Write(hnswEnd(g.N))
	return err
}

// FaissGraph adapts the graph of a faiss IndexHNSW file (vecfile.Graph,
// over vectors of dimension dim) to ImportedHNSW, reading its levels
// (1 byte a node kept). It fails when the graph's level capacities are not
// 2·M on level 0 and M above (faiss's set_default_probas layout, which
// every IndexHNSWFlat(d, M) has). The graph must be inner product or L2:
// on L2-normalised vectors both rank alike, and the graph was built for
// that ranking (the caller checks the norms).
func FaissGraph(g *vecfile.Graph, dim int) (ImportedHNSW, error) {
	if err := g.Uniform(); err != nil {
		return ImportedHNSW{}, err
	}
	levels, err := g.Levels()
	if err != nil {
		return ImportedHNSW{}, err
	}
	return ImportedHNSW{N: g.N, Dim: dim, M: g.M, EfConstruction: g.EfConstruction, EfSearch: g.EfSearch, Entry: g.Entry, Levels: levels, Neighbours: g.Neighbours}, nil
}
