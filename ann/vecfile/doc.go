// Package vecfile reads vector files made by other tools, so that an index
// can import embeddings instead of re-encoding a corpus (`rlsearch index
// --vectors`): Search-R1 and FlashRAG distribute a 21M × 768 E5 index of
// wiki-18 as a faiss IndexFlatIP file (e5_Flat.index, ~65 GB float32).
//
// Formats (detected from the first bytes, .fvecs by its extension):
//
//   - faiss IndexFlatIP / IndexFlatL2, as faiss::write_index writes them
//     (faiss/impl/index_write.cpp, checked against faiss 1.7.3): fourcc
//     "IxFI" (inner product) or "IxF2" (L2), int32 d, int64 ntotal, two
//     int64 dummies (1<<20), one byte is_trained, int32 metric_type
//     (0 = inner product, 1 = L2), then the vector: uint64 count of
//     float32 values (ntotal·d) and the values, row-major. Data start at
//     byte 45.
//   - NumPy .npy, format versions 1.0, 2.0 and 3.0 (numpy.lib.format):
//     magic "\x93NUMPY", major, minor, a little-endian uint16 (v1) or uint32
//     (v2, v3) header length, a Python dict literal with 'descr' ('<f4' or
//     '<f2'), 'fortran_order' (must be False) and 'shape' ((n, d)), then
//     n·d values in C order.
//   - .fvecs (the TEXMEX / faiss benchmark format): each row is an int32 d
//     followed by d float32 values.
//
// All integers are little-endian. A Reader streams rows in chunks (memory:
// the caller's buffer plus one chunk of raw bytes), never the whole file.
// Every size a header claims is checked against the file size before
// anything is allocated, and errors wrap ErrFormat or ErrUnsupported and
// name the byte offset and the field (FuzzParseHeader, FuzzRead).
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
