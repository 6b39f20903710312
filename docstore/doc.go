// Package docstore keeps corpus passages compressed on disk with random
// access by row.
//
// Passages are grouped in blocks of BlockDocs rows (default 64); each block
// is compressed with zstd (github.com/klauspost/compress) and read back
// with one ReadAt and one decompression. A small cache of decoded blocks
// serves the hot rows of a search workload.
//
// # File format (all integers little-endian)
//
//	offset  size            field
//	0       8               magic "RLSDOCS1"
//	8       4               version (1)
//	12      4               block docs B (rows per block)
//	16      8               number of rows N
//	24      ...             blocks: zstd frames, each the concatenation of B
//	                        records (the last block may hold fewer) of
//	                        uvarint len(id), id bytes, uvarint len(contents), contents bytes
//	T       8·(nb+1)        block offsets from the start of the file (nb = ceil(N/B)),
//	                        the last one equals T
//	        4·nb            CRC-32 (IEEE) of each compressed block
//	        8               T, the offset of the table
//	        4               CRC-32 of the table (offsets and block CRCs)
//	        8               magic "RLSDOCS1"
//
// Writing: Writer compresses blocks on WriterConfig.Workers goroutines and
// writes them in row order, so the file is byte-identical to a serial
// write; memory is bounded by the blocks in flight plus the table.
//
// Reading: Open reads the header, the trailer and the table (12 bytes per
// block: about 4 MB for wiki-18's 21M passages) and checks the table CRC;
// nothing else proportional to the file. Each block's CRC is checked when
// the block is read with one pread (ReadAt). The file is not memory-mapped:
// a random Doc costs one pread of a few KB plus the decompression of a
// 64-row block, and the decompression dominates, so mmap would save little
// while making an I/O error on a damaged disk a SIGBUS instead of an error.
// Check reads, decompresses and parses every block (rlsearch check).
// A Store is safe for concurrent use. No cgo.
package docstore
