// Package vecfile reads vector files made by other tools, so that an index
// can import embeddings instead of re-encoding a corpus (`rlsearch index
// --vectors`): Search-R1 and FlashRAG distribute a 21M × 768 E5 index of
// wiki-18 as a faiss IndexFlatIP file (e5_Flat.index, ~65 GB float32).
//
// Formats (detected from the first bytes, .fvecs by its extension):
//
//   - faiss index files, as faiss::write_index writes them
//     (faiss/impl/index_write.cpp; checked against files written by
//     python3-faiss 1.7.3, the layout is unchanged through faiss 1.12). A
//     faiss file is a tree of objects, each a fourcc then its fields; every
//     index starts with int32 d, int64 ntotal, two int64 dummies (1<<20),
//     one byte is_trained and int32 metric_type (0 = inner product, 1 = L2;
//     others are refused). Read:
//     IndexFlatIP "IxFI" / IndexFlatL2 "IxF2": the header, then uint64 count
//     of float32 values (ntotal·d) and the values, row-major (from byte 45
//     at the top of a file).
//     IndexScalarQuantizer "IxSQ" with qtype QT_fp16 (4): qtype, rangestat,
//     rangestat_arg, uint64 d, uint64 code_size (2·d), the trained vector,
//     then the codes: each row d IEEE binary16 values, widened exactly.
//     IndexHNSWFlat "IHNf" (and IndexHNSWSQ "IHNs" over QT_fp16 storage): the
//     header, the HNSW struct (assign_probas []float64,
//     cum_nneighbor_per_level []int32, levels []int32 (levels a node is on),
//     offsets []uint64 (ntotal+1), neighbors []int32 (-1 padded), int32
//     entry_point, max_level, efConstruction, efSearch, upper_beam), then
//     the storage index (IxFI/IxF2/IxSQ) holding the vectors; Reader.Graph
//     reads the graph for import (see Graph).
//     IndexIVFFlat "IwFl": the header, uint64 nlist, nprobe, the quantizer
//     index (skipped), the direct map (byte type, []int64, and for type 2
//     a []pair hashtable), then ArrayInvertedLists "ilar": uint64 nlist,
//     code_size (4·d), list type "full" (nlist sizes) or "sprs" ((list,
//     size) pairs), and per non-empty list its codes then its int64 ids.
//     Rows are gathered back into row order through the ids.
//     IndexIDMap "IxMp" / IndexIDMap2 "IxM2" around any of the above: the
//     header, the inner index, then id_map []int64.
//     faiss ids, in an IndexIDMap or the inverted lists of an IVF, are corpus
//     rows, the convention of Search-R1's and FlashRAG's retrievers, which
//     return corpus[id]: they must be a permutation of 0..ntotal-1 (an id
//     out of range or repeated is an error naming it), and row r of the
//     import is the vector stored under id r.
//     Refused with ErrUnsupported and a message that says why and what to
//     pass instead: lossy codes (IndexPQ, IVFPQ, OPQ and other
//     IndexPreTransform, scalar quantizers other than fp16, IVF scalar
//     quantizers, additive quantizers, LSH, RaBitQ, HNSW over PQ or SQ8),
//     OnDiskInvertedLists (vectors in another file), IVFFlatDedup, "null"
//     storage, other metrics.
//   - NumPy .npy, format versions 1.0, 2.0 and 3.0 (numpy.lib.format):
//     magic "\x93NUMPY", major, minor, a little-endian uint16 (v1) or uint32
//     (v2, v3) header length, a Python dict literal with 'descr' ('<f4' or
//     '<f2'), 'fortran_order' (must be False) and 'shape' ((n, d)), then
//     n·d values in C order.
//   - .fvecs (the TEXMEX / faiss benchmark format): each row is an int32 d
//     followed by d float32 values.
//
// A compressed file (gzip, zstd, also after a leading zstd skippable frame,
// xz and the others internal/decompress recognises) is refused with
// ErrUnsupported naming the compression: the sizes a header claims are
// checked against the file size and rows are read in place, so the file
// must be decompressed first.
//
// All integers are little-endian. A Reader streams rows in chunks (memory:
// the caller's buffer plus one chunk of raw bytes), never the whole file;
// an IVF keeps 8 bytes per row (where each row is in the lists) and an
// IDMap with ids other than 0, 1, 2, ... 4 bytes per row (the
// permutation), whatever the dimension. Every size a header claims is
// checked against the file size before anything is allocated, and errors
// wrap ErrFormat or ErrUnsupported and name the byte offset and the field
// (FuzzParseHeader, TestFaissTruncated).
//
// Example:
//
//	r, err := vecfile.Open("e5_Flat.index")
//	if err != nil { ... }
//	defer r.Close()
//	info := r.Info() // Count, Dim, Metric, Format
//	buf := make([]float32, 4096*info.Dim)
//	for {
//		n, err := r.Read(buf) // n rows in buf[:n*info.Dim]
//		if err == io.EOF { break }
//		...
//	}
package vecfile
