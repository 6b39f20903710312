// Package integrity checks stored files of any kind in full: index
// directories, hybrid collections, directories of them, and single files
// recognised by their magic (vector files, HNSW graphs, BM25 indexes,
// docstores, SQLite databases, files listed in a collection manifest).
// It backs `rlsearch check` (`rlsearch verify` until issue 37, still accepted
// for one release). It was package verify: "verify" now names only the RPL
// mutation verifier of package sdk (V_ret), and file integrity is "check".
//
// No cgo (SQLite is modernc.org/sqlite).
package integrity
