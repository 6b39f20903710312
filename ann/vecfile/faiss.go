package vecfile

import (
	"encoding/binary"
	"fmt"
	"io"
)

// A faiss index file is a tree of objects, each introduced by a four-byte
// code (fourcc) and written field by field (faiss/impl/index_write.cpp,
// checked against files written by faiss 1.7.3; the layout is unchanged in
// faiss 1.8–1.12). This file walks that tree over an io.ReaderAt: small
// fields are read, large arrays are skipped by their declared size (checked
// against the file size first), and only what is needed to find row i of
// the vectors is kept: a contiguous base, a row permutation (IndexIDMap) or
// a table of row offsets (IndexIVFFlat).

// maxFaissDepth bounds nested sub-indexes (IDMap → HNSW → storage is 3;
// an IVF quantizer adds one): a file cannot recurse without limit.
const maxFaissDepth = 8

// Sizes of the faiss index header (write_index_header): int32 d, int64
// ntotal, two int64 dummies (1<<20), one byte is_trained, int32
// metric_type.
const faissIndexHeader = 4 + 8 + 8 + 8 + 1 + 4

// faiss ScalarQuantizer::QuantizerType values (faiss/impl/ScalarQuantizer.h).
var sqTypes = map[int32]string{0: "QT_8bit", 1: "QT_4bit", 2: "QT_8bit_uniform", 3: "QT_4bit_uniform", 4: "QT_fp16", 5: "QT_8bit_direct", 6: "QT_6bit", 7: "QT_bf16", 8: "QT_8bit_direct_signed"}

const sqFP16 = 4

// lossy lists the faiss index types whose stored codes are approximations
// of the vectors, with what they are.
var lossy = map[string]string{
	"IxPq": "IndexPQ, product-quantized codes",
	"IwPQ": "IndexIVFPQ, product-quantized residuals",
	"IwQR": "IndexIVFPQR, product-quantized residuals",
	"IPfs": "IndexPQFastScan, 4-bit product-quantized codes",
	"IwPf": "IndexIVFPQFastScan, 4-bit product-quantized codes",
	"IxPT": "IndexPreTransform (OPQ, PCA or another transform in front of a quantizer)",
	"IHNp": "IndexHNSWPQ, product-quantized storage",
	"IHN2": "IndexHNSW2Level, two-level quantized storage",
	"IwSq": "IndexIVFScalarQuantizer, scalar-quantized residuals",
	"IxRq": "IndexResidualQuantizer, additive codes",
	"IxLS": "IndexLocalSearchQuantizer, additive codes",
	"IxPR": "IndexProductResidualQuantizer, additive codes",
	"IxPL": "IndexProductLocalSearchQuantizer, additive codes",
	"IwRQ": "IndexIVFResidualQuantizer, additive codes",
	"IwLS": "IndexIVFLocalSearchQuantizer, additive codes",
	"IwPR": "IndexIVFProductResidualQuantizer, additive codes",
	"IwPL": "IndexIVFProductLocalSearchQuantizer, additive codes",
	"IxHe": "IndexLSH, binary hashes",
	"Ix2L": "Index2Layer, two-level quantized codes",
	"Ixrq": "IndexRaBitQ, 1-bit codes",
	"Iwrq": "IndexIVFRaBitQ, 1-bit codes",
	"IwSh": "IndexIVFSpectralHash, binary hashes",
}

// insteadHint says what to pass instead of a file this package refuses.
const insteadHint = "pass the float vectors instead: the IndexFlatIP the index was trained from (Search-R1 and FlashRAG ship e5_Flat.index beside their other indexes), an .npy or .fvecs of the embeddings, or --model to encode the corpus"

// cursor reads fields of a faiss file at an advancing offset.
type cursor struct {
	ra   io.ReaderAt
	size int64
	off  int64
	buf  [8]byte
}

func (c *cursor) read(n int, field string) ([]byte, error) {
	if c.off+int64(n) > c.size {
		return nil, formatErr(c.off, field, "file ends after %d bytes, before this %d-byte field", c.size, n)
	}
	b := c.buf[:n]
	if _, err := c.ra.ReadAt(b, c.off); err != nil {
		return nil, formatErr(c.off, field, "read: %v", err)
	}
	c.off += int64(n)
	return b, nil
}

func (c *cursor) u8(field string) (byte, error) {
	b, err := c.read(1, field)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (c *cursor) i32(field string) (int32, error) {
	b, err := c.read(4, field)
	if err != nil {
		return 0, err
	}
	return int32(binary.LittleEndian.Uint32(b)), nil
}

func (c *cursor) u64(field string) (uint64, error) {
	b, err := c.read(8, field)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (c *cursor) fourcc(field string) (string, error) {
	b, err := c.read(4, field)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// vector skips a std::vector as faiss writes it (uint64 element count,
// then the elements) and returns the count and the offset of element 0.
// The elements must lie inside the file.
func (c *cursor) vector(field string, elem int64) (count, start int64, err error) {
	at := c.off
	n, err := c.u64(field + " size")
	if err != nil {
		return 0, 0, err
	}
	left := c.size - c.off
	if n > uint64(left/elem) {
		return 0, 0, formatErr(at, field+" size", "%d elements of %d bytes from offset %d run past the end of the file (%d bytes)", n, elem, c.off, c.size)
	}
	start = c.off
	c.off += int64(n) * elem
	return int64(n), start, nil
}

// faissNode is a parsed index: what it holds and how to find row i of its
// vectors.
type faissNode struct {
	format   Format
	desc     string
	d        int
	ntotal   int
	metric   Metric
	elem     int   // bytes per stored value: 4 (float32) or 2 (float16)
	base     int64 // offset of row 0 when rows are contiguous
	rowBytes int64
	perm     []int32 // row r is stored row perm[r] (nil: identity)
	table    []int64 // row r starts at table[r] (overrides base and perm)
	graph    *Graph
}

// indexHeader is write_index_header's fields.
type indexHeader struct {
	d      int
	ntotal int
	metric Metric
	at     int64 // offset of d
}

func (c *cursor) header(fcc string) (indexHeader, error) {
	h := indexHeader{at: c.off}
	d, err := c.i32("d")
	if err != nil {
		return h, err
	}
	if d < 1 || d > MaxDim {
		return h, formatErr(h.at, "d", "%d must be in 1..%d", d, MaxDim)
	}
	nt, err := c.u64("ntotal")
	if err != nil {
		return h, err
	}
	if int64(nt) < 0 || nt > MaxCount {
		return h, formatErr(h.at+4, "ntotal", "%d must be in 0..%d", int64(nt), MaxCount)
	}
	if _, err := c.read(8, "dummy"); err != nil {
		return h, err
	}
	if _, err := c.read(8, "dummy"); err != nil {
		return h, err
	}
	tr, err := c.u8("is_trained")
	if err != nil {
		return h, err
	}
	if tr > 1 {
		return h, formatErr(c.off-1, "is_trained", "byte %d is not a bool", tr)
	}
	mt, err := c.i32("metric_type")
	if err != nil {
		return h, err
	}
	switch mt {
	case 0:
		h.metric = InnerProduct
	case 1:
		h.metric = L2
	default:
		if mt < 0 || mt > 100 { // faiss MetricType: 0..6, 20..24 (faiss/MetricType.h)
			return h, formatErr(c.off-4, "metric_type", "%d is not a faiss metric", mt)
		}
		return h, unsupported(c.off-4, "metric_type", "%s uses faiss metric %d; only inner product (0) and L2 (1) are served", fcc, mt)
	}
	h.d, h.ntotal = int(d), int(nt)
	return h, nil
}

// parseFaiss walks the index at c.off.
func parseFaiss(c *cursor, depth int) (*faissNode, error) {
	if depth > maxFaissDepth {
		return nil, formatErr(c.off, "fourcc", "sub-indexes nested more than %d deep", maxFaissDepth)
	}
	at := c.off
	fcc, err := c.fourcc("fourcc")
	if err != nil {
		return nil, err
	}
	switch fcc {
	case "IxFI", "IxF2", "IxFl":
		return parseFlat(c, fcc, at)
	case "IxSQ":
		return parseSQ(c, at)
	case "IHNf", "IHNs":
		return parseHNSW(c, fcc, at, depth)
	case "IwFl":
		return parseIVF(c, at, depth)
	case "IxMp", "IxM2":
		return parseIDMap(c, fcc, at, depth)
	case "null":
		return nil, unsupported(at, "fourcc", `"null" index: the file holds no vectors (an HNSW graph written with faiss.IO_FLAG_SKIP_STORAGE?); `+insteadHint)
	case "IwFd":
		return nil, unsupported(at, "fourcc", "IndexIVFFlatDedup (%q) stores each duplicate vector once, so rows cannot be put back in order; %s", fcc, insteadHint)
	}
	if what, ok := lossy[fcc]; ok {
		return nil, unsupported(at, "fourcc", "faiss %s (%q) holds lossy codes: the original vectors cannot be recovered, and serving approximations would rank differently from the vectors the index was built from; %s", what, fcc, insteadHint)
	}
	if isPrintable(fcc) {
		return nil, unsupported(at, "fourcc", "faiss index type %q is not read (read: IndexFlatIP/L2, IndexHNSWFlat, IndexIVFFlat, fp16 IndexScalarQuantizer, IndexIDMap/IDMap2 around them); %s", fcc, insteadHint)
	}
	return nil, formatErr(at, "fourcc", "%q is not a faiss index code", fcc)
}

func isPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func parseFlat(c *cursor, fcc string, at int64) (*faissNode, error) {
	h, err := c.header(fcc)
	if err != nil {
		return nil, err
	}
	switch {
	case fcc == "IxFI" && h.metric == InnerProduct, fcc == "IxF2" && h.metric == L2:
	case fcc == "IxFl":
		return nil, unsupported(at, "fourcc", "IndexFlat with a metric other than inner product or L2")
	default:
		return nil, formatErr(c.off-4, "metric_type", "%d does not match fourcc %q (IxFI is 0, inner product; IxF2 is 1, L2)", map[Metric]int{InnerProduct: 0, L2: 1}[h.metric], fcc)
	}
	sizeAt := c.off
	count, err := c.u64("xb size")
	if err != nil {
		return nil, err
	}
	want := uint64(h.ntotal) * uint64(h.d)
	if count != want {
		return nil, formatErr(sizeAt, "xb size", "%d float32 values, ntotal·d = %d·%d = %d", count, h.ntotal, h.d, want)
	}
	start := c.off
	if end := start + 4*int64(want); end > c.size {
		return nil, formatErr(start, "xb data", "file is %d bytes, the header implies at least %d (%d × %d float32 from offset %d): truncated", c.size, end, h.ntotal, h.d, start)
	}
	c.off += 4 * int64(want)
	name := map[string]string{"IxFI": "IndexFlatIP", "IxF2": "IndexFlatL2"}[fcc]
	return &faissNode{format: FaissFlat, desc: name, d: h.d, ntotal: h.ntotal, metric: h.metric, elem: 4, base: start, rowBytes: 4 * int64(h.d)}, nil
}

func parseSQ(c *cursor, at int64) (*faissNode, error) {
	h, err := c.header("IxSQ")
	if err != nil {
		return nil, err
	}
	qAt := c.off
	qtype, err := c.i32("qtype")
	if err != nil {
		return nil, err
	}
	if qtype != sqFP16 {
		name, ok := sqTypes[qtype]
		if !ok {
			return nil, formatErr(qAt, "qtype", "%d is not a faiss ScalarQuantizer type", qtype)
		}
		if name == "QT_bf16" {
			return nil, unsupported(qAt, "qtype", "IndexScalarQuantizer %s is not read (only QT_fp16, whose codes are the exact float16 values); %s", name, insteadHint)
		}
		return nil, unsupported(qAt, "qtype", "IndexScalarQuantizer %s holds lossy codes (%s quantizes each value to a few bits of a trained range; only QT_fp16 reconstructs exactly); %s", name, name, insteadHint)
	}
	if _, err := c.read(8, "rangestat"); err != nil { // rangestat int32, rangestat_arg float
		return nil, err
	}
	dAt := c.off
	sd, err := c.u64("sq.d")
	if err != nil {
		return nil, err
	}
	if sd != uint64(h.d) {
		return nil, formatErr(dAt, "sq.d", "%d, the index has d = %d", sd, h.d)
	}
	csAt := c.off
	cs, err := c.u64("code_size")
	if err != nil {
		return nil, err
	}
	if cs != 2*uint64(h.d) {
		return nil, formatErr(csAt, "code_size", "%d bytes, QT_fp16 codes of %d dimensions are %d", cs, h.d, 2*h.d)
	}
	if _, _, err := c.vector("trained", 4); err != nil {
		return nil, err
	}
	codesAt := c.off
	n, start, err := c.vector("codes", 1)
	if err != nil {
		return nil, err
	}
	if n != int64(h.ntotal)*int64(cs) {
		return nil, formatErr(codesAt, "codes size", "%d bytes, ntotal·code_size = %d·%d = %d", n, h.ntotal, cs, int64(h.ntotal)*int64(cs))
	}
	return &faissNode{format: FaissSQ, desc: "IndexScalarQuantizer(QT_fp16)", d: h.d, ntotal: h.ntotal, metric: h.metric, elem: 2, base: start, rowBytes: int64(cs)}, nil
}

// storageOf checks that sub can be the vector storage of an index with
// header h.
func storageOf(h indexHeader, sub *faissNode, what string, at int64) error {
	if sub.d != h.d || sub.ntotal != h.ntotal {
		return formatErr(at, what, "%s holds %d × %d vectors, the index %d × %d", sub.desc, sub.ntotal, sub.d, h.ntotal, h.d)
	}
	if sub.metric != h.metric {
		return formatErr(at, what, "%s has metric %v, the index %v", sub.desc, sub.metric, h.metric)
	}
	return nil
}

func parseHNSW(c *cursor, fcc string, at int64, depth int) (*faissNode, error) {
	h, err := c.header(fcc)
	if err != nil {
		return nil, err
	}
	if _, _, err := c.vector("assign_probas", 8); err != nil {
		return nil, err
	}
	cumAt := c.off
	nc, cumStart, err := c.vector("cum_nneighbor_per_level", 4)
	if err != nil {
		return nil, err
	}
	if nc < 2 || nc > 256 {
		return nil, formatErr(cumAt, "cum_nneighbor_per_level", "%d entries, want 2..256 (one per level plus one)", nc)
	}
	raw := make([]byte, 4*nc)
	if _, err := c.ra.ReadAt(raw, cumStart); err != nil {
		return nil, formatErr(cumStart, "cum_nneighbor_per_level", "read: %v", err)
	}
	cum := make([]int32, nc)
	for i := range cum {
		cum[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		if (i == 0 && cum[i] != 0) || (i > 0 && (cum[i] < cum[i-1] || cum[i]-cum[i-1] > 1<<16)) {
			return nil, formatErr(cumStart+4*int64(i), "cum_nneighbor_per_level", "entry %d = %d: want 0 first, then increasing by at most 65536", i, cum[i])
		}
	}
	g := &Graph{ra: c.ra, size: c.size, N: h.ntotal, cum: cum, metric: h.metric}
	levAt := c.off
	nl, levStart, err := c.vector("levels", 4)
	if err != nil {
		return nil, err
	}
	if nl != int64(h.ntotal) {
		return nil, formatErr(levAt, "levels size", "%d, ntotal is %d", nl, h.ntotal)
	}
	offAt := c.off
	no, offStart, err := c.vector("offsets", 8)
	if err != nil {
		return nil, err
	}
	if no != int64(h.ntotal)+1 {
		return nil, formatErr(offAt, "offsets size", "%d, want ntotal+1 = %d", no, h.ntotal+1)
	}
	nbAt := c.off
	nn, nbStart, err := c.vector("neighbors", 4)
	if err != nil {
		return nil, err
	}
	var last [8]byte
	if _, err := c.ra.ReadAt(last[:], offStart+8*int64(h.ntotal)); err != nil {
		return nil, formatErr(offStart+8*int64(h.ntotal), "offsets", "read: %v", err)
	}
	if got := binary.LittleEndian.Uint64(last[:]); got != uint64(nn) {
		return nil, formatErr(nbAt, "neighbors size", "%d, offsets[ntotal] = %d", nn, got)
	}
	g.levelsOff, g.offsetsOff, g.neighborsOff, g.nNeighbors = levStart, offStart, nbStart, nn
	entry, err := c.i32("entry_point")
	if err != nil {
		return nil, err
	}
	maxLevel, err := c.i32("max_level")
	if err != nil {
		return nil, err
	}
	if (h.ntotal == 0 && (entry != -1 || maxLevel != -1)) || (h.ntotal > 0 && (entry < 0 || int(entry) >= h.ntotal || maxLevel < 0 || int64(maxLevel) >= nc-1)) {
		return nil, formatErr(c.off-8, "entry_point", "entry point %d at max level %d for %d nodes and %d levels", entry, maxLevel, h.ntotal, nc-1)
	}
	efc, err := c.i32("efConstruction")
	if err != nil {
		return nil, err
	}
	efs, err := c.i32("efSearch")
	if err != nil {
		return nil, err
	}
	if _, err := c.i32("upper_beam"); err != nil {
		return nil, err
	}
	g.Entry, g.entryNode, g.MaxLevel, g.EfConstruction, g.EfSearch = entry, entry, int(maxLevel), int(max(efc, 1)), int(max(efs, 1))
	g.M0 = int(cum[1])
	if nc > 2 {
		g.M = int(cum[2] - cum[1])
	}
	subAt := c.off
	sub, err := parseFaiss(c, depth+1)
	if err != nil {
		return nil, err
	}
	if sub.perm != nil || sub.table != nil || sub.graph != nil {
		return nil, formatErr(subAt, "storage", "the HNSW storage is %s; want a flat or scalar-quantizer index", sub.desc)
	}
	if err := storageOf(h, sub, "storage", subAt); err != nil {
		return nil, err
	}
	n := *sub
	n.format, n.graph = FaissHNSW, g
	n.desc = fmt.Sprintf("IndexHNSW(M=%d, storage %s)", g.M, sub.desc)
	return &n, nil
}

func parseIVF(c *cursor, at int64, depth int) (*faissNode, error) {
	h, err := c.header("IwFl")
	if err != nil {
		return nil, err
	}
	nlAt := c.off
	nlist, err := c.u64("nlist")
	if err != nil {
		return nil, err
	}
	if nlist > 1<<31 {
		return nil, formatErr(nlAt, "nlist", "%d lists", nlist)
	}
	if _, err := c.u64("nprobe"); err != nil {
		return nil, err
	}
	qAt := c.off
	q, err := parseFaiss(c, depth+1)
	if err != nil {
		return nil, fmt.Errorf("IVF quantizer: %w", err)
	}
	if q.d != h.d || uint64(q.ntotal) != nlist {
		return nil, formatErr(qAt, "quantizer", "%s holds %d × %d centroids, the IVF has nlist %d of d %d", q.desc, q.ntotal, q.d, nlist, h.d)
	}
	dmAt := c.off
	dm, err := c.u8("direct_map type")
	if err != nil {
		return nil, err
	}
	if dm > 2 {
		return nil, formatErr(dmAt, "direct_map type", "%d (want 0 none, 1 array, 2 hashtable)", dm)
	}
	if _, _, err := c.vector("direct_map array", 8); err != nil {
		return nil, err
	}
	if dm == 2 {
		if _, _, err := c.vector("direct_map hashtable", 16); err != nil {
			return nil, err
		}
	}
	ilAt := c.off
	il, err := c.fourcc("invlists")
	if err != nil {
		return nil, err
	}
	switch il {
	case "ilar":
	case "il00":
		return nil, unsupported(ilAt, "invlists", "IndexIVFFlat without inverted lists (%q): the file holds no vectors", il)
	case "ilod":
		return nil, unsupported(ilAt, "invlists", "OnDiskInvertedLists (%q): the vectors are in a separate .ivfdata file; merge them into the index first (faiss merge_ondisk into ArrayInvertedLists, or reconstruct_n to .npy)", il)
	default:
		return nil, unsupported(ilAt, "invlists", "inverted lists of type %q are not read (only ArrayInvertedLists, \"ilar\")", il)
	}
	nl2, err := c.u64("invlists nlist")
	if err != nil {
		return nil, err
	}
	if nl2 != nlist {
		return nil, formatErr(c.off-8, "invlists nlist", "%d, the IVF has nlist %d", nl2, nlist)
	}
	cs, err := c.u64("invlists code_size")
	if err != nil {
		return nil, err
	}
	if cs != 4*uint64(h.d) {
		return nil, formatErr(c.off-8, "invlists code_size", "%d bytes, IndexIVFFlat codes of %d float32 are %d", cs, h.d, 4*h.d)
	}
	ltAt := c.off
	lt, err := c.fourcc("list_type")
	if err != nil {
		return nil, err
	}
	szAt := c.off
	ns, szStart, err := c.vector("list sizes", 8)
	if err != nil {
		return nil, err
	}
	// sizes: nlist sizes ("full") or (list, size) pairs ("sprs"), in list order.
	var sizes []uint64
	switch lt {
	case "full":
		if uint64(ns) != nlist {
			return nil, formatErr(szAt, "list sizes", "%d sizes for %d lists", ns, nlist)
		}
	case "sprs":
		if ns%2 != 0 || uint64(ns/2) > nlist {
			return nil, formatErr(szAt, "list sizes", "%d values: want (list, size) pairs for at most %d lists", ns, nlist)
		}
	default:
		return nil, formatErr(ltAt, "list_type", "%q (want \"full\" or \"sprs\")", lt)
	}
	raw := make([]byte, 8*ns)
	if _, err := c.ra.ReadAt(raw, szStart); err != nil {
		return nil, formatErr(szStart, "list sizes", "read: %v", err)
	}
	var total uint64
	prev := int64(-1)
	for i := int64(0); i < ns; i++ {
		v := binary.LittleEndian.Uint64(raw[8*i:])
		if lt == "sprs" && i%2 == 0 {
			if int64(v) <= prev || v >= nlist {
				return nil, formatErr(szStart+8*i, "list sizes", "list number %d out of order or ≥ nlist %d", v, nlist)
			}
			prev = int64(v)
			continue
		}
		if v > MaxCount || total+v > MaxCount {
			return nil, formatErr(szStart+8*i, "list sizes", "list size %d: more than %d vectors", v, MaxCount)
		}
		sizes = append(sizes, v)
		total += v
	}
	if total != uint64(h.ntotal) {
		return nil, formatErr(szAt, "list sizes", "lists hold %d vectors, ntotal is %d", total, h.ntotal)
	}
	if need := total * (cs + 8); need > uint64(c.size-c.off) {
		return nil, formatErr(c.off, "inverted lists", "%d vectors of %d + 8 bytes need %d bytes, %d are left in the file: truncated", total, cs, need, c.size-c.off)
	}
	table := make([]int64, h.ntotal)
	for i := range table {
		table[i] = -1
	}
	ids := make([]byte, 8*4096)
	for li, n := range sizes {
		codes := c.off
		idsAt := codes + int64(n)*int64(cs)
		end := idsAt + 8*int64(n)
		if end > c.size || end < codes {
			return nil, formatErr(codes, "inverted list", "list %d of %d vectors runs past the end of the file (%d bytes)", li, n, c.size)
		}
		for j := uint64(0); j < n; j += 4096 {
			m := min(4096, n-j)
			b := ids[:8*m]
			if _, err := c.ra.ReadAt(b, idsAt+8*int64(j)); err != nil {
				return nil, formatErr(idsAt+8*int64(j), "inverted list ids", "read: %v", err)
			}
			for k := uint64(0); k < m; k++ {
				id := int64(binary.LittleEndian.Uint64(b[8*k:]))
				off := idsAt + 8*int64(j+k)
				if id < 0 || id >= int64(h.ntotal) {
					return nil, formatErr(off, "inverted list ids", "id %d in list %d is not a row (0..%d): faiss ids must be the corpus rows, in corpus order", id, li, h.ntotal-1)
				}
				if table[id] >= 0 {
					return nil, formatErr(off, "inverted list ids", "id %d appears twice (list %d): each corpus row must be stored once", id, li)
				}
				table[id] = codes + int64(j+k)*int64(cs)
			}
		}
		c.off = end
	}
	return &faissNode{format: FaissIVF, desc: fmt.Sprintf("IndexIVFFlat(nlist=%d)", nlist), d: h.d, ntotal: h.ntotal, metric: h.metric, elem: 4, rowBytes: int64(cs), table: table}, nil
}

func parseIDMap(c *cursor, fcc string, at int64, depth int) (*faissNode, error) {
	h, err := c.header(fcc)
	if err != nil {
		return nil, err
	}
	subAt := c.off
	sub, err := parseFaiss(c, depth+1)
	if err != nil {
		return nil, err
	}
	if err := storageOf(h, sub, "index", subAt); err != nil {
		return nil, err
	}
	idAt := c.off
	n, start, err := c.vector("id_map", 8)
	if err != nil {
		return nil, err
	}
	if n != int64(h.ntotal) {
		return nil, formatErr(idAt, "id_map size", "%d ids for %d vectors", n, h.ntotal)
	}
	perm := make([]int32, h.ntotal)
	for i := range perm {
		perm[i] = -1
	}
	identity := true
	buf := make([]byte, 8*4096)
	for j := int64(0); j < n; j += 4096 {
		m := min(4096, n-j)
		b := buf[:8*m]
		if _, err := c.ra.ReadAt(b, start+8*j); err != nil {
			return nil, formatErr(start+8*j, "id_map", "read: %v", err)
		}
		for k := int64(0); k < m; k++ {
			id := int64(binary.LittleEndian.Uint64(b[8*k:]))
			pos := j + k
			if id < 0 || id >= int64(h.ntotal) {
				return nil, formatErr(start+8*pos, "id_map", "id_map[%d] = %d is not a row of the corpus (0..%d): the ids of an IndexIDMap must be the corpus rows, as Search-R1's and FlashRAG's retrievers read them (corpus[id])", pos, id, h.ntotal-1)
			}
			if perm[id] >= 0 {
				return nil, formatErr(start+8*pos, "id_map", "id %d appears at positions %d and %d: each corpus row must be stored once", id, perm[id], pos)
			}
			perm[id] = int32(pos)
			identity = identity && id == pos
		}
	}
	out := *sub
	out.desc = map[string]string{"IxMp": "IndexIDMap", "IxM2": "IndexIDMap2"}[fcc] + "(" + sub.desc + ")"
	if identity {
		return &out, nil
	}
	switch {
	case sub.table != nil:
		t := make([]int64, len(perm))
		for r, p := range perm {
			t[r] = sub.table[p]
		}
		out.table = t
	case sub.perm != nil:
		for r, p := range perm {
			perm[r] = sub.perm[p]
		}
		out.perm = perm
	default:
		out.perm = perm
	}
	if sub.graph != nil {
		g := *sub.graph
		g.perm = out.perm
		if sub.table != nil { // an HNSW never has a table
			return nil, formatErr(subAt, "index", "internal: graph over an IVF")
		}
		g.inv = make([]int32, len(g.perm))
		for r, v := range g.perm {
			g.inv[v] = int32(r)
		}
		if g.entryNode >= 0 {
			g.Entry = g.inv[g.entryNode]
		}
		out.graph = &g
	}
	return &out, nil
}

// Graph is the HNSW graph of a faiss IndexHNSWFlat file (faiss/impl/HNSW.h),
// read from the file on demand: node v's neighbours on level l are the
// slots [offsets[v] + cum[l], offsets[v] + cum[l+1]) of the neighbors
// array, ending at the first -1. Nodes are the file's storage rows; with an
// IndexIDMap around the graph, Graph translates them to corpus rows, so
// every id it takes and returns is a corpus row. A Graph is not safe for
// concurrent use.
type Graph struct {
	// N is the number of nodes.
	N int
	// M0 is the capacity of level 0 and M that of the levels above
	// (faiss's default: 2·M and M, set_default_probas).
	M0, M int
	// MaxLevel is the top level (faiss max_level; -1 for an empty graph);
	// Entry the row of the entry point (-1 when empty).
	MaxLevel int
	Entry    int32
	// EfConstruction and EfSearch are the parameters saved in the file.
	EfConstruction, EfSearch int

	entryNode                           int32
	metric                              Metric
	ra                                  io.ReaderAt
	size                                int64
	cum                                 []int32
	levelsOff, offsetsOff, neighborsOff int64
	nNeighbors                          int64
	perm, inv                           []int32 // row r is node perm[r], node v is row inv[v]; nil = identity
	levels                              []uint8 // faiss levels − 1 by node, after Levels
	offWin, nbWin                       window
	raw                                 []byte
}

// Metric is the metric the graph was built for.
func (g *Graph) Metric() Metric { return g.metric }

// Uniform reports whether every level above 0 has the same capacity M and
// level 0 has 2·M, the layout of faiss's set_default_probas and of package
// ann's HNSW; when not, it says why.
func (g *Graph) Uniform() error {
	if g.M < 1 || g.M0 != 2*g.M {
		return fmt.Errorf("vecfile: faiss HNSW level 0 holds %d neighbours and level 1 %d; want 2·M and M", g.M0, g.M)
	}
	for l := 1; l <= g.MaxLevel; l++ {
		if c := g.cum[l+1] - g.cum[l]; int(c) != g.M {
			return fmt.Errorf("vecfile: faiss HNSW level %d holds %d neighbours, level 1 %d; want the same M on every level above 0", l, c, g.M)
		}
	}
	return nil
}

// Levels returns each row's top level (faiss's levels[v] − 1, the number
// of levels the node is on less one), in row order. It reads the file's
// levels array once (4 bytes a node) and checks every level against the
// graph's level count. The slice is the caller's.
func (g *Graph) Levels() ([]uint8, error) {
	if g.levels == nil {
		lv := make([]uint8, g.N)
		buf := make([]byte, 4*65536)
		top := len(g.cum) - 1
		for lo := 0; lo < g.N; lo += 65536 {
			m := min(65536, g.N-lo)
			b := buf[:4*m]
			off := g.levelsOff + 4*int64(lo)
			if _, err := g.ra.ReadAt(b, off); err != nil {
				return nil, formatErr(off, "levels", "read: %v", err)
			}
			for i := 0; i < m; i++ {
				v := int32(binary.LittleEndian.Uint32(b[4*i:]))
				if v < 1 || int(v) > top || int(v)-1 > g.MaxLevel {
					return nil, formatErr(off+4*int64(i), "levels", "node %d is on %d levels; want 1..%d (max_level %d)", lo+i, v, min(top, g.MaxLevel+1), g.MaxLevel)
				}
				lv[lo+i] = uint8(v - 1)
			}
		}
		g.levels = lv
	}
	out := make([]uint8, g.N)
	if g.perm == nil {
		copy(out, g.levels)
	} else {
		for r, v := range g.perm {
			out[r] = g.levels[v]
		}
	}
	return out, nil
}

// Neighbours appends the neighbours of row on level to dst and returns it:
// the slots up to the first -1, translated to rows. It checks the node's
// offsets against its level count and every neighbour against the node
// count (errors wrap ErrFormat and name the offset). Levels must have been
// called. Reading rows in increasing order reads the file sequentially
// (1 MiB windows).
func (g *Graph) Neighbours(dst []int32, row int32, level int) ([]int32, error) {
	if g.levels == nil {
		return nil, fmt.Errorf("vecfile: Graph.Neighbours before Levels")
	}
	if row < 0 || int(row) >= g.N {
		return nil, fmt.Errorf("vecfile: Graph.Neighbours: row %d of %d", row, g.N)
	}
	v := row
	if g.perm != nil {
		v = g.perm[row]
	}
	if level < 0 || level > int(g.levels[v]) {
		return nil, fmt.Errorf("vecfile: Graph.Neighbours: row %d has no level %d", row, level)
	}
	ob, err := g.offWin.at(g.ra, g.size, g.offsetsOff+8*int64(v), 16)
	if err != nil {
		return nil, formatErr(g.offsetsOff+8*int64(v), "offsets", "read: %v", err)
	}
	begin, end := binary.LittleEndian.Uint64(ob), binary.LittleEndian.Uint64(ob[8:])
	if want := uint64(g.cum[int(g.levels[v])+1]); end < begin || end-begin != want || end > uint64(g.nNeighbors) {
		return nil, formatErr(g.offsetsOff+8*int64(v), "offsets", "node %d has slots [%d, %d), its %d levels need %d (of %d)", v, begin, end, g.levels[v]+1, want, g.nNeighbors)
	}
	lo, hi := begin+uint64(g.cum[level]), begin+uint64(g.cum[level+1])
	off := g.neighborsOff + 4*int64(lo)
	nb, err := g.nbWin.at(g.ra, g.size, off, int(4*(hi-lo)))
	if err != nil {
		return nil, formatErr(off, "neighbors", "read: %v", err)
	}
	for i := 0; i < int(hi-lo); i++ {
		u := int32(binary.LittleEndian.Uint32(nb[4*i:]))
		if u == -1 {
			break
		}
		if u < 0 || int(u) >= g.N {
			return nil, formatErr(off+4*int64(i), "neighbors", "node %d level %d links to %d, not a node (0..%d)", v, level, u, g.N-1)
		}
		if g.inv != nil {
			u = g.inv[u]
		}
		dst = append(dst, u)
	}
	return dst, nil
}

// window caches one span of a file for small sequential reads.
type window struct {
	start int64
	buf   []byte
}

const windowBytes = 1 << 20

func (w *window) at(ra io.ReaderAt, size, off int64, n int) ([]byte, error) {
	if off >= w.start && off+int64(n) <= w.start+int64(len(w.buf)) {
		return w.buf[off-w.start : off-w.start+int64(n)], nil
	}
	l := int64(max(n, windowBytes))
	if off+l > size {
		l = size - off
	}
	if l < int64(n) {
		return nil, io.ErrUnexpectedEOF
	}
	if int64(cap(w.buf)) < l {
		w.buf = make([]byte, l)
	}
	w.buf = w.buf[:l]
	if _, err := ra.ReadAt(w.buf, off); err != nil && !(err == io.EOF && off+l == size) {
		w.buf = w.buf[:0]
		return nil, err
	}
	w.start = off
	return w.buf[:n], nil
}

// parseFaissFile parses a whole faiss file: exactly one index, ending at
// the end of the file.
func parseFaissFile(ra io.ReaderAt, size int64) (Info, *faissNode, error) {
	c := &cursor{ra: ra, size: size}
	n, err := parseFaiss(c, 0)
	if err != nil {
		return Info{}, nil, err
	}
	if c.off != size {
		return Info{}, nil, formatErr(c.off, "end", "%d trailing bytes after the %s", size-c.off, n.desc)
	}
	in := Info{Format: n.format, Metric: n.metric, Count: n.ntotal, Dim: n.d, ElemSize: n.elem, RowBytes: n.rowBytes, Desc: n.desc}
	if n.table == nil && n.perm == nil {
		in.DataOffset = n.base
	}
	in.Gathered = n.table != nil || n.perm != nil
	return in, n, nil
}

// faissMagic reports whether head starts like a faiss index file: a
// printable fourcc starting with "I" (every faiss index type but the IVF
// additive fast-scan ones, "NPLf" and "NPRf").
func faissMagic(head []byte) bool {
	if len(head) < 4 || !isPrintable(string(head[:4])) {
		return false
	}
	f := string(head[:4])
	return f[0] == 'I' || f == "NPLf" || f == "NPRf" || f == "null"
}
