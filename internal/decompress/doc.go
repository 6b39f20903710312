// Package decompress reads input files that may be compressed: plain,
// gzip or zstd, recognised by their first bytes, never by the file name.
// It is the one place that knows the magic numbers, so that the corpus
// reader, the hybrid collection build and the vector-file import agree on
// what a compressed file is.
//
// A zstd stream may begin with skippable frames (magic 0x184D2A50 to
// 0x184D2A5F, RFC 8878 §3.1.2): pzstd and some archivers write one first
// (pzstd records its frame sizes there). Such a file is zstd, as `zstd -dc`
// reads it; the decoder skips the frames. Formats that are recognised but
// not read (xz, bzip2, lz4, zip, 7z, compress .Z) are an error naming the
// format and what to do, instead of being parsed as text and blamed on the
// first "line".
//
// No cgo. A Reader is not safe for concurrent use; Sniff is.
package decompress
