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
// Open checks the header, the trailer, the table and its CRC; each block's
// CRC is checked when the block is read. A Store is safe for concurrent use.
// No cgo.
package docstore
