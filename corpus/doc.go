// Package corpus streams passages from a Search-R1 / FlashRAG corpus file.
//
// A corpus is JSON Lines, one passage per line, in either of two shapes:
//
//	{"id": "wiki-000001", "contents": "\"Title\"\ntext"}   Search-R1, FlashRAG
//	{"id": "wiki-000001", "title": "Title", "text": "text"} DPR-style
//
// When a line has contents, contents wins and the title is taken from its
// first line; otherwise contents is built as "\"" + title + "\"\n" + text.
// Numeric ids are accepted and kept as their decimal text. An optional
// "url" string (ASearcher's wiki corpus has one per passage) is kept as
// Passage.URL; index.Build stores it beside the passages. The file may be
// plain, gzip (.gz) or zstd (.zst, also one that starts with zstd
// skippable frames, as pzstd writes it); the compression is detected from
// the first bytes, not the file name (package internal/decompress), and
// xz, bzip2, lz4, zip and 7z files are refused naming the format.
//
// The text must be UTF-8 (as Python's json.loads of a text-mode file
// requires): encoding/json would silently turn an invalid byte inside a
// string into U+FFFD, so the first invalid byte is an error instead.
// Errors name the 1-based line number and a byte offset, in the line and
// in the file (in the decompressed text of a .gz/.zst): of the offending
// byte for invalid UTF-8 and JSON syntax, of the line's start for a line
// that parses but is unusable (no id, no text, a wrong type, a duplicate
// id). A line over MaxLineBytes (64 MiB) is an error (ErrLineTooLong), so
// a file without newlines or a decompression bomb cannot take all of
// memory. Duplicate ids are an error. Passages whose text is empty or
// whitespace-only are skipped and counted (Skipped).
//
// No cgo, CPU only. A Reader is not safe for concurrent use.
package corpus
