// Package rlsearch holds the few types shared by every part of the retrieval
// backend: documents, hits, the Encoder, Retriever and Reranker interfaces
// and the error kinds the HTTP layer maps to statuses. It has no cgo and no
// dependencies beyond the standard library.
//
// A higher score is always better outside package ann, and ties break by
// ascending row so that CPU and GPU backends agree.
//
// # Floors
//
// The module is layered and imports point down only (TestImportFloors,
// layout_test.go, checks it with go list; ARCHITECTURE.md draws the floors
// package by package):
//
//	cmd/...         the binaries: flags into Configs; may import anything below
//	                (cmd/rlsearch serves and links no bench/ package, TestServingBinaryDeps;
//	                cmd/rlsearch-bench measures; cmd/internal/cmdflags holds their shared flags)
//	bench/...       the benchmark harness beside cmd/: may import any package but cmd/,
//	                and only cmd/rlsearch-bench and bench/ import it
//	server/app      assembles what serve serves (an index, or a router) and every endpoint
//	server/router   the router mode over shard servers; imports server
//	server          the one HTTP layer; imports only this package and internal/
//	index, sdk, reward, hybrid, rerank, embed, bm25, ann, docstore, corpus, verify, client, cuda, kernels
//	                the domain packages: they never import server/..., bench/... or cmd/...
//	internal/...    leaf helpers (JSON bodies, JSONL, atomic files, progress, batching, CLI, test
//	                helpers): they import only this package and other internal/ packages
//	rlsearch        this package: the standard library only
//
// This package is the ground under internal/: internal/jsonbody imports it
// for its error kinds (BadField, ErrBadInput, ErrTooLarge), which is not an
// arrow up: the kinds are part of the public API (a Go caller of sdk or
// reward tests errors.Is(err, rlsearch.ErrBadInput)), so they cannot move
// into internal/, and this package imports nothing of the module, so no
// cycle and no domain code can come in that way.
package rlsearch
