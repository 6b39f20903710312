package server

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/rlsearch/rlsearch"
)

// DocRetriever is a Retriever that returns the documents of its hits with
// them, for retrievers whose documents live elsewhere (a router over
// shard servers, which receives them in the shards' answers). /retrieve
// then writes those documents instead of looking the rows up in
// Config.Docs, and holds them until the response is written. docs[i][j]
// is the document of hits[i][j]. Implementations are safe for concurrent
// use.
type DocRetriever interface {
	rlsearch.Retriever
	RetrieveDocs(ctx context.Context, queries []string, k int) (hits [][]rlsearch.Hit, docs [][]rlsearch.Document, err error)
}

// PartialHeader is the response header that flags an answer computed
// without part of the data (MarkPartial); its value says what was missing.
const PartialHeader = "X-Rlsearch-Partial"

// notes is what the retrievers of one request report to the server
// (MarkPartial, MarkUnavailable). One per request, in its context.
type notes struct {
	mu          sync.Mutex
	partial     []string
	unavailable error
}

type notesKey struct{}

// withNotes returns ctx carrying a new notes record.
func withNotes(ctx context.Context) (context.Context, *notes) {
	n := &notes{}
	return context.WithValue(ctx, notesKey{}, n), n
}

func notesOf(ctx context.Context) *notes {
	n, _ := ctx.Value(notesKey{}).(*notes)
	return n
}

// MarkPartial records, for the request whose context (or a context
// derived from it) is ctx, that an answer was computed without part of the
// data: what says which (a router's "shard 2 of 4"). The response gets the
// PartialHeader header listing every such report, and a /retrieve answer
// also the field "partial": [what, ...] beside "result". Outside a
// server's request it does nothing. Safe for concurrent use.
func MarkPartial(ctx context.Context, what string) {
	if n := notesOf(ctx); n != nil {
		n.mu.Lock()
		if !slices.Contains(n.partial, what) {
			n.partial = append(n.partial, what)
		}
		n.mu.Unlock()
	}
}

// MarkUnavailable records that err (which should wrap
// rlsearch.ErrOverloaded) must fail the whole request, even when the
// endpoint turned the failed retrieval into a 200 answer (a program's
// error observation): the server answers err instead, 503 with
// Retry-After, so that clients retry rather than train on an error
// observation. The first report wins. Outside a server's request it does
// nothing. Safe for concurrent use.
func MarkUnavailable(ctx context.Context, err error) {
	if n := notesOf(ctx); n != nil {
		n.mu.Lock()
		if n.unavailable == nil {
			n.unavailable = err
		}
		n.mu.Unlock()
	}
}

// result returns the reports: the partial ones sorted, and the
// unavailable error.
func (n *notes) result() (partial []string, unavailable error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Sorted(slices.Values(n.partial)), n.unavailable
}

// flag sets the PartialHeader of a partial answer and returns the
// reports.
func (n *notes) flag(w *respWriter) []string {
	partial, _ := n.result()
	if len(partial) > 0 {
		w.Header().Set(PartialHeader, strings.Join(partial, ", "))
	}
	return partial
}
