package ann

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand"
	"os"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

const (
	hnswMagic   = "RLSHNSW1"
	hnswVersion = 1
	hnswHdrLen  = 60 // 56 bytes of fields + CRC-32C

	hnswFlagInt8 = 1 << 0
	hnswFlagZstd = 1 << 1
	// hnswFlagShared marks a graph without a vector section: it serves
	// over the vectors of the shard it was imported beside
	// (SaveImportedHNSW; LoadHNSWShared only).
	hnswFlagShared = 1 << 2

	tagLevels = "LBLK"
	tagLinks0 = "NBLK"
	tagUpper  = "UBLK"
	tagHEnd   = "HEND"

	graphBlockRows = 4096
)

// Save writes the graph, its vectors (an embedded fp32 shard section) and,
// with Int8, its codes (an embedded int8 section) to path atomically (temp
// file, sync, rename); layout in FORMAT.md. zstd compresses every block
// (vectors byte-shuffled). Not safe concurrently with Add.
func (h *HNSW) Save(path string, zstd bool) error {
	if h.rr != nil {
		return errors.New("ann: Save after RerankOn: the graph holds no vectors to save (save before RerankOn)")
	}
	return writeGraphFile(path, func(bw *bufio.Writer) error { return h.write(bw, zstd) })
}

// writeGraphFile writes a graph file at path atomically (temp file, sync,
// rename; nothing is left on error) through a 1 MiB buffer, with write
// writing every byte of it.
func writeGraphFile(path string, write func(bw *bufio.Writer) error) (err error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("ann: create %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Abort()
			err = fmt.Errorf("ann: write %s: %w", path, err)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// write writes the whole graph file to bw (Save).
func (h *HNSW) write(bw *bufio.Writer, zstd bool) error {
	var flags uint32
	if h.codes != nil {
		flags |= hnswFlagInt8
	}
	if zstd {
		flags |= hnswFlagZstd
	}
	if _, err := bw.Write(hnswHeader(h.cfg, h.n, h.dim, h.entry, h.top, flags)); err != nil {
		return err
	}
	vh := Header{DType: FP32, Count: h.n, Dim: h.dim, Zstd: zstd, Shuffle: zstd}
	vw, err := newSectionWriter(bw, vh)
	if err != nil {
		return err
	}
	if h.vecs != nil {
		if err := vw.Append(h.vecs); err != nil {
			return err
		}
	} else { // shared fp16/int8 shard: widen in chunks of 1 MiB
		step := max(1, (1<<20)/(4*h.dim))
		buf := make([]float32, step*h.dim)
		for lo := 0; lo < h.n; lo += step {
			hi := min(lo+step, h.n)
			if err := vw.Append(h.src.widen(buf, lo, hi)); err != nil {
				return err
			}
		}
	}
	if err := vw.Close(); err != nil {
		return err
	}
	if h.codes != nil {
		ch := Header{DType: INT8, Count: h.n, Dim: h.dim, Zstd: zstd, Scale: h.scale, Offset: h.offset}
		cw, err := newSectionWriter(bw, ch)
		if err != nil {
			return err
		}
		if err := cw.appendRaw(&Flat{h: ch, i8: h.codes}, 0, h.n, nil); err != nil {
			return err
		}
		if err := cw.Close(); err != nil {
			return err
		}
	}
	gw, err := newGraphWriter(bw, zstd)
	if err != nil {
		return err
	}
	if err := gw.writeChunks(tagLevels, h.level, 1, 1); err != nil {
		return err
	}
	m0 := 2*h.cfg.M + 1
	if err := gw.writeChunks(tagLinks0, int32Bytes(h.links0), 4*m0, 4); err != nil {
		return err
	}
	var up []int32
	for v, u := range h.upper {
		for l := 0; l < len(u)/(h.cfg.M+1); l++ {
			up = append(up, int32(v))
			up = append(up, u[l*(h.cfg.M+1):(l+1)*(h.cfg.M+1)]...)
		}
	}
	if err := gw.writeChunks(tagUpper, int32Bytes(up), 4*(h.cfg.M+2), 4); err != nil {
		return err
	}
	if gw.enc != nil {
		gw.enc.Close()
	}
	_, err = bw.Write(hnswEnd(h.n))
	return err
}

// hnswHeader is the 60-byte file header (FORMAT.md).
func hnswHeader(cfg HNSWConfig, n, dim int, entry int32, top int, flags uint32) []byte {
	le := binary.LittleEndian
	b := []byte(hnswMagic)
	b = le.AppendUint32(b, hnswVersion)
	b = le.AppendUint32(b, uint32(cfg.M))
	b = le.AppendUint32(b, uint32(cfg.EfConstruction))
	b = le.AppendUint32(b, uint32(cfg.EfSearch))
	b = le.AppendUint64(b, uint64(cfg.Seed))
	b = le.AppendUint64(b, uint64(n))
	b = le.AppendUint32(b, uint32(dim))
	b = le.AppendUint32(b, uint32(entry))
	b = le.AppendUint32(b, uint32(top))
	b = le.AppendUint32(b, flags)
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// hnswEnd is the 16-byte end record.
func hnswEnd(n int) []byte {
	end := []byte(tagHEnd)
	end = binary.LittleEndian.AppendUint64(end, uint64(n))
	return binary.LittleEndian.AppendUint32(end, crc32.Checksum(end, castagnoli))
}

// newGraphWriter returns a writer of graph blocks to bw: they share the
// shard block framing, and the writer writes only blocks (no header).
func newGraphWriter(bw *bufio.Writer, zstd bool) (*VectorFileWriter, error) {
	gw, err := newSectionWriter(bufio.NewWriter(discard{}), Header{DType: FP32, Dim: 1, Zstd: zstd, Shuffle: zstd})
	if err != nil {
		return nil, err
	}
	gw.bw = bw
	return gw, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func int32Bytes(v []int32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	return b
}

// writeChunks writes raw (records of rowBytes) as blocks of up to
// graphBlockRows records. An empty raw writes no block.
func (w *VectorFileWriter) writeChunks(tag string, raw []byte, rowBytes, elemSize int) error {
	step := graphBlockRows * rowBytes
	for lo := 0; lo < len(raw); lo += step {
		hi := min(lo+step, len(raw))
		if err := w.flushBlock(tag, raw[lo:hi], (hi-lo)/rowBytes, elemSize); err != nil {
			return err
		}
	}
	return nil
}

// readChunks reads rows records of rowBytes written by writeChunks.
func (sr *VectorFileReader) readChunks(tag string, rows, rowBytes, elemSize int) ([]byte, error) {
	var out []byte
	for lo := 0; lo < rows; lo += graphBlockRows {
		n := min(graphBlockRows, rows-lo)
		raw, err := sr.readBlock(tag, n, rowBytes, elemSize)
		if err != nil {
			return nil, err
		}
		out = append(out, raw...)
	}
	return out, nil
}

// ErrSharedGraph is returned by LoadHNSW for a graph saved without its own
// vectors (SaveImportedHNSW): load it with LoadHNSWShared over its shard.
var ErrSharedGraph = errors.New("ann: the graph has no vectors of its own (imported beside a vector file): load it with LoadHNSWShared over that vector file")

// LoadHNSW reads a graph written by Save. Every block is checksummed and
// the graph is validated (ids in range, counts within capacity, every
// neighbour present on the level it is linked at), so a corrupt file is
// refused with an error wrapping ErrCorrupt that names the block and
// offset; it never panics. Add and Search work on the result; the level
// generator continues where the saved build left off.
func LoadHNSW(path string) (*HNSW, error) {
	h, err := loadHNSW(path, nil, false)
	if err != nil {
		return nil, fmt.Errorf("ann: read %s: %w", path, err)
	}
	return h, nil
}

// LoadHNSWShared loads the graph at path over the vectors of f (the shard
// it was built over; see ShareVectors): the file's float32 vector section
// (and, when f is int8, its code section) is checked block by block but
// not kept, so resident memory is f plus the graph (plus int8 codes when
// the graph has them and f is not int8). Errors: as LoadHNSW, ErrDim when
// f's shape differs from the graph's.
func LoadHNSWShared(path string, f *Flat) (*HNSW, error) {
	h, err := loadHNSW(path, f, false)
	if err != nil {
		return nil, fmt.Errorf("ann: read %s: %w", path, err)
	}
	return h, nil
}

// skipSection reads the remaining blocks of a section, checking them.
func (sr *VectorFileReader) skipSection() error {
	for {
		_, _, err := sr.NextRaw()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// loadHNSW reads the graph at path; over share (LoadHNSWShared) or, with
// noVecs, without any vectors (its vector section checked and skipped; its
// int8 codes kept when it has them): the graph of a streamed compressed
// open, which gets its codes and re-rank rows from the shard file.
func loadHNSW(path string, share *Flat, noVecs bool) (*HNSW, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sr := &VectorFileReader{path: path, r: bufio.NewReaderSize(f, 64<<10), embedded: true}
	if st, err := f.Stat(); err == nil {
		sr.size = st.Size()
	}
	defer sr.Close()
	le := binary.LittleEndian
	var hb [hnswHdrLen]byte
	if err := sr.readFull(hb[:], "hnsw header"); err != nil {
		return nil, err
	}
	if string(hb[:8]) != hnswMagic {
		return nil, fmt.Errorf("%w: bad magic %q at offset 0, want %q", ErrCorrupt, hb[:8], hnswMagic)
	}
	if got, want := le.Uint32(hb[56:]), crc32.Checksum(hb[:56], castagnoli); got != want {
		return nil, fmt.Errorf("%w: hnsw header checksum mismatch at offset 56", ErrCorrupt)
	}
	if v := le.Uint32(hb[8:]); v != hnswVersion {
		return nil, fmt.Errorf("%w: hnsw version %d at offset 8, want %d", ErrCorrupt, v, hnswVersion)
	}
	cfg := HNSWConfig{M: int(le.Uint32(hb[12:])), EfConstruction: int(le.Uint32(hb[16:])), EfSearch: int(le.Uint32(hb[20:])), Seed: int64(le.Uint64(hb[24:]))}
	n64, dim := le.Uint64(hb[32:]), int(le.Uint32(hb[40:]))
	entry, top, flags := int32(le.Uint32(hb[44:])), int(le.Uint32(hb[48:])), le.Uint32(hb[52:])
	if cfg.M < 2 || cfg.M > 256 || cfg.EfConstruction < 1 || cfg.EfSearch < 1 || cfg.EfConstruction > 1<<20 || cfg.EfSearch > 1<<20 {
		return nil, fmt.Errorf("%w: hnsw parameters M=%d efConstruction=%d efSearch=%d at offset 12", ErrCorrupt, cfg.M, cfg.EfConstruction, cfg.EfSearch)
	}
	if n64 > math.MaxInt32 || dim <= 0 || dim > maxDim || top > maxLevel || flags>>3 != 0 || (flags&hnswFlagShared != 0 && flags&hnswFlagInt8 != 0) {
		return nil, fmt.Errorf("%w: hnsw count %d, dim %d, top level %d or flags %#x out of range (offset 32)", ErrCorrupt, n64, dim, top, flags)
	}
	n := int(n64)
	if (n == 0) != (entry < 0) || int(entry) >= n {
		return nil, fmt.Errorf("%w: hnsw entry point %d for %d nodes at offset 44", ErrCorrupt, entry, n)
	}
	cfg.Int8 = flags&hnswFlagInt8 != 0
	h := &HNSW{cfg: cfg, dim: dim, n: n, entry: entry, top: top}
	if share != nil && (share.Len() != n || share.Dim() != dim) {
		return nil, fmt.Errorf("%w: vector file has %d × %d vectors, graph %d × %d", ErrDim, share.Len(), share.Dim(), n, dim)
	}
	switch {
	case flags&hnswFlagShared != 0: // no vector section
		if share == nil && !noVecs {
			return nil, ErrSharedGraph
		}
	default:
		if err := sr.readHeader(false); err != nil {
			return nil, err
		}
		if sr.h.DType != FP32 || sr.h.Count != n || sr.h.Dim != dim {
			return nil, fmt.Errorf("%w: vector section (%v, %d × %d) does not match the graph (fp32, %d × %d)", ErrCorrupt, sr.h.DType, sr.h.Count, sr.h.Dim, n, dim)
		}
		sr.row, sr.block, sr.eof = 0, 0, false
		if share != nil || noVecs {
			if err := sr.skipSection(); err != nil {
				return nil, err
			}
			break
		}
		vf, err := sr.readAll()
		if err != nil {
			return nil, err
		}
		h.vecs = vf.f32
	}
	if cfg.Int8 {
		sr.row, sr.block, sr.eof = 0, 0, false
		if err := sr.readHeader(false); err != nil {
			return nil, err
		}
		if sr.h.DType != INT8 || sr.h.Count != n || sr.h.Dim != dim {
			return nil, fmt.Errorf("%w: code section (%v, %d × %d) does not match the graph (int8, %d × %d)", ErrCorrupt, sr.h.DType, sr.h.Count, sr.h.Dim, n, dim)
		}
		if share != nil && share.i8 != nil {
			if err := sr.skipSection(); err != nil {
				return nil, err
			}
		} else {
			cf, err := sr.readAll()
			if err != nil {
				return nil, err
			}
			h.codes, h.scale, h.offset = cf.i8, sr.h.Scale, sr.h.Offset
		}
	}
	// Graph blocks.
	sr.block = 0
	sr.h.Zstd, sr.h.Shuffle = flags&hnswFlagZstd != 0, flags&hnswFlagZstd != 0
	m0 := 2*cfg.M + 1
	if sr.h.Zstd {
		if err := sr.newDecoder(uint64(graphBlockRows) * uint64(4*m0)); err != nil {
			return nil, err
		}
	}
	levels, err := sr.readChunks(tagLevels, n, 1, 1)
	if err != nil {
		return nil, err
	}
	h.level = levels
	var upperRecs int
	for v, l := range levels {
		if int(l) > top {
			return nil, fmt.Errorf("%w: node %d has level %d above the top level %d", ErrCorrupt, v, l, top)
		}
		upperRecs += int(l)
	}
	if n > 0 && int(levels[entry]) != top {
		return nil, fmt.Errorf("%w: entry point %d has level %d, header says %d", ErrCorrupt, entry, levels[entry], top)
	}
	raw0, err := sr.readChunks(tagLinks0, n, 4*m0, 4)
	if err != nil {
		return nil, err
	}
	h.links0 = make([]int32, n*m0)
	for i := range h.links0 {
		h.links0[i] = int32(le.Uint32(raw0[4*i:]))
	}
	rawU, err := sr.readChunks(tagUpper, upperRecs, 4*(cfg.M+2), 4)
	if err != nil {
		return nil, err
	}
	h.upper = make([][]int32, n)
	rec := 0
	for v := 0; v < n; v++ {
		l := int(levels[v])
		if l == 0 {
			continue
		}
		u := make([]int32, l*(cfg.M+1))
		for j := 0; j < l; j++ {
			base := 4 * (cfg.M + 2) * rec
			if node := int(int32(le.Uint32(rawU[base:]))); node != v {
				return nil, fmt.Errorf("%w: upper-level record %d is for node %d, want %d", ErrCorrupt, rec, node, v)
			}
			for i := 0; i < cfg.M+1; i++ {
				u[j*(cfg.M+1)+i] = int32(le.Uint32(rawU[base+4+4*i:]))
			}
			rec++
		}
		h.upper[v] = u
	}
	// Validate adjacency: counts within capacity, ids in range and present
	// on the level.
	for v := 0; v < n; v++ {
		for l := 0; l <= int(levels[v]); l++ {
			var s []int32
			if l == 0 {
				s = h.links0[v*m0 : (v+1)*m0]
			} else {
				s = h.upper[v][(l-1)*(cfg.M+1) : l*(cfg.M+1)]
			}
			if s[0] < 0 || int(s[0]) > h.capacity(l) {
				return nil, fmt.Errorf("%w: node %d level %d has %d neighbours (capacity %d)", ErrCorrupt, v, l, s[0], h.capacity(l))
			}
			for _, nb := range s[1 : 1+s[0]] {
				if nb < 0 || int(nb) >= n || int(levels[nb]) < l {
					return nil, fmt.Errorf("%w: node %d level %d links to %d, not a node on that level", ErrCorrupt, v, l, nb)
				}
			}
		}
	}
	start := sr.off
	var end [16]byte
	if err := sr.readFull(end[:], "hnsw end record"); err != nil {
		return nil, err
	}
	if string(end[:4]) != tagHEnd || le.Uint64(end[4:]) != uint64(n) || le.Uint32(end[12:]) != crc32.Checksum(end[:12], castagnoli) {
		return nil, fmt.Errorf("%w: bad hnsw end record at offset %d", ErrCorrupt, start)
	}
	if _, err := sr.r.ReadByte(); err == nil {
		return nil, fmt.Errorf("%w: trailing bytes after the end record at offset %d", ErrCorrupt, sr.off)
	}
	// Continue the level generator where the build left off.
	h.rng = rand.New(rand.NewSource(cfg.Seed))
	for i := 0; i < n; i++ {
		h.randomLevel()
	}
	if share != nil {
		if err := h.ShareVectors(share); err != nil {
			return nil, err
		}
	}
	return h, nil
}
