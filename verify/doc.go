// Package verify checks stored files of any kind in full: index
// directories, hybrid collections, directories of them, and single files
// recognised by their magic (dense shards, HNSW graphs, BM25 indexes,
// docstores, SQLite databases, files listed in a collection manifest).
// It backs `rlsearch verify`.
//
// No cgo (SQLite is modernc.org/sqlite).
package verify
