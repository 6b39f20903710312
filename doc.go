// Package rlsearch holds the few types shared by every part of the retrieval
// backend: documents, hits, and the Encoder and Retriever interfaces. It has
// no cgo and no dependencies beyond the standard library.
//
// A higher score is always better outside package ann, and ties break by
// ascending row so that CPU and GPU backends agree.
package rlsearch
