// Package client is a Go client of Search-R1's retrieval API as
// `rlsearch serve` (and Search-R1's own retrieval server) answers it:
// POST /retrieve with {"queries", "topk", "return_scores": true} and an
// optional "retriever" (rlsearch's extension).
//
// No cgo. Functions are safe for concurrent use.
package client
