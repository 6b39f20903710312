// Package stubsdk is the stub retrieval SDK that program-runtime overhead
// is measured on, in Go and in Python with equal semantics: a retrieval
// call of width k returns rows shifted by a hash of the query (CRC-32 % 97,
// stride 7, 1000 stub documents), rerank scores len(contents) % 7. The Go
// side (Retriever, Corpus, Reranker) backs sdk's overhead benchmark and the
// `programs` suite of `rlsearch-bench run`; Python (stub_sdk.py, also embedded
// as Python) backs their CPython peer. sdk's TestStubParity and bench/peers'
// TestProgramsParity check both print identical observations.
//
// No index, no I/O; safe for concurrent use.
package stubsdk

import (
	"context"
	_ "embed"
	"fmt"
	"hash/crc32"

	"github.com/rlsearch/rlsearch"
)

// Python is stub_sdk.py: make_sdk(out) returns the program globals
// (dense, sparse, fuse, dedup, rerank, print, question) appending printed
// text to out; run as a script it times programs (usage in its docstring).
//
//go:embed stub_sdk.py
var Python string

// Retriever returns precomputed rows: query q, width k → rows
// (crc32(q) % 97 + 7i) % 1000 with score 1/(i+1).
type Retriever struct{ Route string }

// Name returns the route name.
func (s Retriever) Name() string { return s.Route }

// Retrieve implements rlsearch.Retriever.
func (s Retriever) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for j, q := range qs {
		off := int(crc32.ChecksumIEEE([]byte(q)) % 97)
		hs := make([]rlsearch.Hit, k)
		for i := range hs {
			hs[i] = rlsearch.Hit{Row: int32((off + i*7) % 1000), Score: 1 / float32(i+1)}
		}
		out[j] = hs
	}
	return out, nil
}

// Corpus renders row r as id "doc-r", title "Title r".
type Corpus struct{}

// Doc implements the runtime's document source.
func (Corpus) Doc(row int32) (rlsearch.Document, error) {
	return rlsearch.Document{ID: fmt.Sprintf("doc-%d", row), Contents: fmt.Sprintf("\"Title %d\"\nText of stub passage %d.", row, row)}, nil
}

// Reranker scores a document len(contents) % 7.
type Reranker struct{}

// Name returns "stub".
func (Reranker) Name() string { return "stub" }

// Rerank implements rlsearch.Reranker.
func (Reranker) Rerank(_ context.Context, _ string, docs []rlsearch.Document) ([]float32, error) {
	s := make([]float32, len(docs))
	for i, d := range docs {
		s[i] = float32(len(d.Contents) % 7)
	}
	return s, nil
}
