package rlsearch

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is one corpus passage as Search-R1 and FlashRAG ship it.
//
// Contents follows the corpus convention `"Title"\ntext`: the title in double
// quotes on the first line, the passage text after the newline.
type Document struct {
	ID       string `json:"id"`
	Contents string `json:"contents"`
}

// Title returns the title part of Contents (the first line without its
// surrounding double quotes), or "" when Contents has no newline.
func (d Document) Title() string {
	first, _, ok := strings.Cut(d.Contents, "\n")
	if !ok {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(first, `"`), `"`)
}

// TitleLine returns the first line of Contents as stored, the title in its
// double quotes (what Search-R1's _passages2string prints as the title),
// or "" when Contents has no newline.
func (d Document) TitleLine() string {
	first, _, ok := strings.Cut(d.Contents, "\n")
	if !ok {
		return ""
	}
	return first
}

// Text returns the passage text after the title line (all of Contents when
// there is no title line).
func (d Document) Text() string {
	_, rest, ok := strings.Cut(d.Contents, "\n")
	if !ok {
		return d.Contents
	}
	return rest
}

// MakeContents builds Contents from a title and a text in the corpus
// convention `"Title"\ntext`.
func MakeContents(title, text string) string {
	return `"` + title + `"` + "\n" + text
}

// Result is one retrieved document and its score: one entry of a
// /retrieve answer ({"document": {...}, "score": 12.5}), as index.Search
// returns it and package client decodes it. Score is the retriever's
// (BM25 sum, or the E5 inner product), widened to float64.
type Result struct {
	Document Document `json:"document"`
	Score    float64  `json:"score"`
}

// Hit is one search result: Row is the 0-based row of the passage in the
// index (its order in the corpus file after empty passages were skipped),
// Score is the retriever's score, where higher is better.
//
// Lists of hits are sorted by descending Score, ties by ascending Row, so
// that every backend (CPU, GPU, serial, concurrent) returns the same order.
type Hit struct {
	Row   int32
	Score float32
}

// Less reports whether a ranks before b: higher score first, ties by lower row.
func Less(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Row < b.Row
}

// CompareHits orders hits as Less does, for slices.SortFunc and
// slices.IsSortedFunc: -1 when a ranks before b, +1 after, 0 for equal
// hits.
func CompareHits(a, b Hit) int {
	switch {
	case Less(a, b):
		return -1
	case Less(b, a):
		return 1
	}
	return 0
}

// Encoder turns texts into unit-length embeddings.
//
// Implementations are safe for concurrent use. The returned slice is
// row-major [len(texts), Dim()] float32, owned by the caller. An empty or
// whitespace-only text yields a zero vector (never NaN).
type Encoder interface {
	// Dim is the embedding dimension.
	Dim() int
	// EncodeQueries embeds search queries (E5: with the "query: " prefix).
	EncodeQueries(ctx context.Context, texts []string) ([]float32, error)
	// EncodePassages embeds corpus passages (E5: with the "passage: " prefix).
	EncodePassages(ctx context.Context, texts []string) ([]float32, error)
	// Name identifies the model (directory name or config id) for logs and /healthz.
	Name() string
}

// Retriever answers a batch of text queries with the top k passages each.
//
// Implementations are safe for concurrent use. The result has one list per
// query, each sorted as described on Hit and at most k long (shorter when
// the index holds fewer passages or the query matches nothing).
type Retriever interface {
	Retrieve(ctx context.Context, queries []string, k int) ([][]Hit, error)
	// Name is the retriever's name in the API (RetrieverBM25,
	// RetrieverE5).
	Name() string
}

// Retriever names: the one vocabulary of /retrieve's "retriever" field,
// the keys of index.Index.Retrievers, server.Config.Retrievers and
// sdk.Config.Retrievers, and the text-field index kinds of package hybrid.
const (
	RetrieverBM25 = "bm25" // BM25 over the index's postings (package bm25)
	RetrieverE5   = "e5"   // dense retrieval: an E5 Encoder over the index's vector file (packages embed, ann)
)

// ErrBadInput marks errors caused by the caller's input (as opposed to the
// index or the machine). Servers map it to a 4xx status.
var ErrBadInput = errors.New("rlsearch: bad input")

// Reranker scores (query, document) pairs with a cross-attention model
// (Qwen3-Reranker, BERT cross-encoders). Higher is better.
//
// Implementations are safe for concurrent use. Rerank returns one score per
// document, in the order of docs; it never reorders, drops or invents
// documents. Errors wrapping ErrBadInput mean the caller's input was at fault.
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []Document) ([]float32, error)
	// Name identifies the model for logs and /healthz.
	Name() string
}

// TokenCounter counts the tokens of a text as the policy model's tokenizer
// sees them (for observation budgets). Safe for concurrent use.
type TokenCounter interface {
	CountTokens(text string) int
}

// Distinct returns the distinct values of xs in first-seen order and, for
// each position of xs, the index of its value in uniq (so xs[i] ==
// uniq[at[i]]). Batch endpoints use it to do the work of a repeated query
// or document once. O(len(xs)) time and memory; xs is not modified.
func Distinct[T comparable](xs []T) (uniq []T, at []int) {
	first := make(map[T]int, len(xs))
	at = make([]int, len(xs))
	for i, x := range xs {
		k, ok := first[x]
		if !ok {
			k = len(uniq)
			first[x] = k
			uniq = append(uniq, x)
		}
		at[i] = k
	}
	return uniq, at
}

// QuoteShort quotes s (strconv.Quote) for an error message, cut at a rune
// boundary to its first 80 bytes with "…" after the quote when longer: a
// query in an error stays readable whatever its length.
func QuoteShort(s string) string {
	const max = 80
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
