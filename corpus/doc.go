// Package corpus streams passages from a Search-R1 / FlashRAG corpus file.
//
// A corpus is JSON Lines, one passage per line, in either of two shapes:
//
//	{"id": "wiki-000001", "contents": "\"Title\"\ntext"}   Search-R1, FlashRAG
//	{"id": "wiki-000001", "title": "Title", "text": "text"} DPR-style
//
// When a line has contents, contents wins and the title is taken from its
// first line; otherwise contents is built as "\"" + title + "\"\n" + text.
// Numeric ids are accepted and kept as their decimal text. The file may be
// plain, gzip (.gz) or zstd (.zst); the compression is detected from the
// first bytes, not the file name.
//
// Errors name the 1-based line number. Duplicate ids are an error. Passages
// whose text is empty or whitespace-only are skipped and counted (Skipped).
//
// No cgo, CPU only. A Reader is not safe for concurrent use.
package corpus
