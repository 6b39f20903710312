package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// retrieveRequest is a validated /retrieve request.
type retrieveRequest struct {
	queries      []string
	topK         int
	returnScores bool
	name         string // API name of the retriever
	retriever    rlsearch.Retriever
	urls         bool // every document carries "url" (ProfileASearcher)
}

// searchR1Body is the body of Search-R1's /retrieve (retrieval_server.py
// QueryRequest), decoded by jsonbody.DecodeMembers: unknown keys are
// ignored (clients send extras), near-misses of these names refused.
// Null counts as absent everywhere but in "queries" (which is required).
type searchR1Body struct {
	Queries      queryList       `json:"queries"`
	TopK         json.RawMessage `json:"topk"` // Search-R1's quirks: parseCount
	ReturnScores *bool           `json:"return_scores"`
	Retriever    *string         `json:"retriever"` // our extension
}

// searchR1Fields are searchR1Body's fields by their folded key (see
// jsonbody.NearMiss).
var searchR1Fields = map[string]string{"queries": "queries", "topk": "topk", "returnscores": "return_scores", "retriever": "retriever"}

// queryList is "queries": a list of strings, with messages that name the
// bad element; set records that the key was present (null included).
type queryList struct {
	set     bool
	queries []string
}

func (q *queryList) UnmarshalJSON(raw []byte) error {
	q.set = true
	if kind := jsonbody.Kind(raw); kind != "list" {
		return rlsearch.BadField("queries", "queries must be a list of strings, got %s", kind)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return rlsearch.BadField("queries", "queries must be a list of strings: %v", err)
	}
	q.queries = make([]string, len(elems))
	for i, e := range elems {
		if kind := jsonbody.Kind(e); kind != "string" {
			return rlsearch.BadField("queries", "queries[%d] must be a string, got %s", i, kind)
		}
		if err := json.Unmarshal(e, &q.queries[i]); err != nil {
			return rlsearch.BadField("queries", "queries[%d]: %v", i, err)
		}
	}
	return nil
}

// parseRetrieve validates a Search-R1 /retrieve body (TestSearchR1Quirks
// pins every accepted shape): other dialects' fields are refused, the
// members decoded through jsonbody as every endpoint's, then the limits
// and the retriever checked.
func (s *Server) parseRetrieve(fields map[string]json.RawMessage) (*retrieveRequest, error) {
	// Near-misses first ("top_k" is rLLM's field, but next to "queries" a
	// misspelt "topk"), then other dialects' fields.
	if err := jsonbody.NearMissError("", fields, searchR1Fields); err != nil {
		return nil, err
	}
	if err := dSearchR1.checkForeign(fields); err != nil {
		return nil, err
	}
	var b searchR1Body
	if err := jsonbody.DecodeMembers(fields, &b, jsonbody.Ignore); err != nil {
		return nil, err
	}
	if !b.Queries.set {
		return nil, rlsearch.BadField("queries", `missing required field "queries" (a list of strings)`)
	}
	req := &retrieveRequest{queries: b.Queries.queries, returnScores: b.ReturnScores != nil && *b.ReturnScores, name: s.cfg.Default}
	if len(req.queries) > s.cfg.MaxQueries {
		return nil, rlsearch.TooLarge("queries", "too many queries: %d > %d per request; split the batch", len(req.queries), s.cfg.MaxQueries)
	}
	var err error
	if req.topK, err = parseCount("topk", b.TopK, defaultTopK, s.cfg.MaxTopK); err != nil {
		return nil, err
	}
	// Hits asked for, counted before any work: a 50 KB body of 4096
	// queries at topk 1000 would otherwise stream gigabytes.
	if n := len(req.queries) * req.topK; n > s.cfg.MaxResults {
		return nil, rlsearch.TooLarge("topk", "too many results: %d queries x topk %d = %d, over the limit of %d results per request; lower topk or split the batch",
			len(req.queries), req.topK, n, s.cfg.MaxResults)
	}
	if b.Retriever != nil {
		req.name = *b.Retriever
	}
	if req.name, req.retriever, err = s.lookupRetriever(req.name); err != nil {
		return nil, err
	}
	return req, nil
}

// handleRetrieve answers POST /retrieve. Every query is searched (in
// chunks, see search) and every score checked before the first byte is
// written, so that a retrieval failure is a proper 4xx/5xx; only the
// documents are fetched while the response streams (writeResult).
func (s *Server) handleRetrieve(w *respWriter, r *http.Request) {
	if !s.allowMethod(w, r, http.MethodPost) {
		return
	}
	req, enc, err := s.dispatchRetrieve(w, r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if req == nil {
		return // answered in another dialect (dialect_retrieve.go)
	}
	w.queries = len(req.queries)
	s.metrics.batchSize.Observe(float64(len(req.queries)))

	ctx, nt := withNotes(r.Context())
	hits, docs, ends, err := s.search(ctx, req)
	if _, unavailable := nt.result(); err == nil && unavailable != nil {
		err = unavailable
	}
	if err != nil {
		s.retrieveFailed(w, r, req.name, err)
		return
	}
	if enc == encMsgpack {
		s.writeResultValue(w, r, req, enc, hits, docs, ends, nt.flag(w))
		return
	}
	s.writeResult(w, r, req, hits, docs, ends, nt.flag(w))
}

// search runs the request's retriever on its non-blank queries, at most
// Config.ChunkQueries per Retrieve call, and checks and compacts each
// chunk's lists as soon as they return (see check), so that what a request
// holds beyond its body is the flat hit array, len(queries) × topk × 8
// bytes at most (2.6 MB for 32,768 × 10), plus one chunk's lists. Blank
// (empty or whitespace-only) queries get an empty list without reaching
// the retriever. The result is flat: list i is hits[ends[i-1]:ends[i]].
// A DocRetriever's documents come back in docs, aligned with hits (nil
// for other retrievers, whose rows writeResult looks up in Config.Docs).
func (s *Server) search(ctx context.Context, req *retrieveRequest) ([]rlsearch.Hit, []rlsearch.Document, []int, error) {
	n := len(req.queries)
	ends := make([]int, n)
	hits := make([]rlsearch.Hit, 0, min(n*req.topK, 1<<20)) // n*topK ≤ Config.MaxResults; lists may be shorter
	chunk := s.cfg.ChunkQueries
	dr, withDocs := req.retriever.(DocRetriever)
	var (
		qs   []string
		idx  []int
		seen map[int32]struct{}
		docs []rlsearch.Document
	)
	for lo := 0; lo < n; {
		// Positions [lo, hi) hold at most chunk non-blank queries.
		qs, idx = qs[:0], idx[:0]
		hi := lo
		for ; hi < n && len(qs) < chunk; hi++ {
			if strings.TrimSpace(req.queries[hi]) != "" {
				qs = append(qs, req.queries[hi])
				idx = append(idx, hi)
			}
		}
		var (
			lists    [][]rlsearch.Hit
			docLists [][]rlsearch.Document
		)
		if len(qs) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, err
			}
			// RL rollout batches repeat queries (the samples of one
			// prompt often issue the same search): each distinct query of
			// the chunk is searched once, whatever the retriever; check
			// only reads the lists, so repeats share one.
			uniq, at := rlsearch.Distinct(qs)
			start := time.Now()
			var (
				got     [][]rlsearch.Hit
				gotDocs [][]rlsearch.Document
				err     error
			)
			if withDocs {
				got, gotDocs, err = dr.RetrieveDocs(ctx, uniq, req.topK)
			} else {
				got, err = req.retriever.Retrieve(ctx, uniq, req.topK)
			}
			s.metrics.retrieval.WithLabelValues(req.name).Observe(time.Since(start).Seconds())
			s.metrics.queriesTot.WithLabelValues(req.name).Add(float64(len(qs)))
			if err != nil {
				return nil, nil, nil, err
			}
			if len(got) != len(uniq) || (withDocs && len(gotDocs) != len(uniq)) {
				return nil, nil, nil, fmt.Errorf("retriever %s returned %d lists (%d of documents) for %d queries", req.name, len(got), len(gotDocs), len(uniq))
			}
			lists = make([][]rlsearch.Hit, len(qs))
			if withDocs {
				docLists = make([][]rlsearch.Document, len(qs))
			}
			for j, u := range at {
				lists[j] = got[u]
				if withDocs {
					if len(gotDocs[u]) != len(got[u]) {
						return nil, nil, nil, fmt.Errorf("retriever %s returned %d documents for %d hits of queries[%d]", req.name, len(gotDocs[u]), len(got[u]), idx[j])
					}
					docLists[j] = gotDocs[u]
				}
			}
		}
		j := 0
		for i := lo; i < hi; i++ {
			if j < len(idx) && idx[j] == i {
				var (
					dl  []rlsearch.Document
					err error
				)
				if withDocs {
					dl = docLists[j]
				}
				if hits, docs, seen, err = s.check(req, i, lists[j], dl, hits, docs, seen); err != nil {
					return nil, nil, nil, err
				}
				j++
			}
			ends[i] = len(hits)
		}
		lo = hi
	}
	return hits, docs, ends, nil
}

// errBadScore marks a NaN or infinite score, which JSON cannot carry.
var errBadScore = errors.New("server: retriever returned a NaN or infinite score")

// check appends the hits of query i's list l to hits, cleaned: it drops
// padding rows (< 0) and repeated rows and cuts the list to topk, and it
// fails on rows outside the corpus and on scores JSON cannot represent,
// naming the query. dl, when not nil, holds the documents of l, which
// are appended to docs alongside. seen is scratch space kept between
// calls.
func (s *Server) check(req *retrieveRequest, i int, l []rlsearch.Hit, dl []rlsearch.Document, hits []rlsearch.Hit, docs []rlsearch.Document, seen map[int32]struct{}) ([]rlsearch.Hit, []rlsearch.Document, map[int32]struct{}, error) {
	n := s.cfg.Docs.Len()
	start := len(hits)
	big := len(l) > 64 // quadratic duplicate check below that
	if big {
		if seen == nil {
			seen = make(map[int32]struct{}, len(l))
		} else {
			clear(seen)
		}
	}
next:
	for hi, h := range l {
		if len(hits)-start >= req.topK {
			break
		}
		if h.Row < 0 {
			continue // padding id from a short top-k; never a document
		}
		if int(h.Row) >= n {
			return nil, nil, seen, fmt.Errorf("retriever %s returned row %d outside the corpus of %d documents for queries[%d] %s", req.name, h.Row, n, i, rlsearch.QuoteShort(req.queries[i]))
		}
		if big {
			if _, dup := seen[h.Row]; dup {
				continue
			}
			seen[h.Row] = struct{}{}
		} else {
			for _, g := range hits[start:] {
				if g.Row == h.Row {
					continue next
				}
			}
		}
		if math.IsNaN(float64(h.Score)) || math.IsInf(float64(h.Score), 0) {
			return nil, nil, seen, fmt.Errorf("retriever %s scored %v for queries[%d] %s, row %d: %w", req.name, h.Score, i, rlsearch.QuoteShort(req.queries[i]), h.Row, errBadScore)
		}
		hits = append(hits, h)
		if dl != nil {
			docs = append(docs, dl[hi])
		}
	}
	return hits, docs, seen, nil
}

// retrieveFailed answers a failed retrieval with the server's one error
// mapping (classify); a retriever's rlsearch.ErrBadInput is a 400 naming
// "queries" (kind retriever_input).
func (s *Server) retrieveFailed(w *respWriter, r *http.Request, name string, err error) {
	status, _, _ := classify(err, r.Context())
	switch {
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge:
		s.fail(w, status, kindRetrieverInput, "retriever "+name+": "+err.Error(), "queries")
	case status == http.StatusServiceUnavailable && errors.Is(err, context.DeadlineExceeded):
		s.failErr(w, r, fmt.Errorf("retrieval timed out: %w", err))
	case status == http.StatusInternalServerError:
		s.failErr(w, r, fmt.Errorf("retrieval failed: %w", err))
	default:
		s.failErr(w, r, err)
	}
}

// flushBytes is the size at which writeResult hands its buffer to the
// connection, so that a large response is streamed rather than held.
const flushBytes = 64 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, flushBytes+4096); return &b }}

// writeResult streams {"result": [...]} in Search-R1's shape, fetching
// each document as it goes, so that memory grows with the number of hits
// and not with their text. A document that cannot be fetched before the
// first flush (64 KiB of output) gives a proper 500; after it, the status
// line is out and the connection is aborted, so the client sees a broken
// response rather than a truncated success.
//
// docs, when not nil, holds the documents of hits (a DocRetriever's), and
// partial the MarkPartial reports, written as the field "partial".
func (s *Server) writeResult(w *respWriter, r *http.Request, req *retrieveRequest, hits []rlsearch.Hit, docs []rlsearch.Document, ends []int, partial []string) {
	bp := bufPool.Get().(*[]byte)
	b := (*bp)[:0]
	defer func() {
		if cap(b) <= 4*flushBytes {
			*bp = b[:0]
			bufPool.Put(bp)
		}
	}()
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	var werr error
	flush := func() {
		if werr == nil && len(b) > 0 {
			_, werr = w.Write(b)
		}
		b = b[:0]
	}
	b = append(b, `{"result":[`...)
	start := 0
	for i, end := range ends {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, hit := range hits[start:end] {
			var (
				d   rlsearch.Document
				err error
			)
			if docs != nil {
				d = docs[start+j]
			} else {
				d, err = DocOf(r.Context(), s.cfg.Docs, hit.Row)
			}
			if err != nil {
				err = fmt.Errorf("document of row %d: %w", hit.Row, err)
				if w.status == 0 {
					s.retrieveFailed(w, r, req.name, err)
					return
				}
				s.log.Error("server: document lookup failed mid-response; aborting the connection", "retriever", req.name, "err", err)
				w.errKind = kindInternal
				s.metrics.errors.WithLabelValues(kindInternal).Inc()
				panic(http.ErrAbortHandler)
			}
			if j > 0 {
				b = append(b, ',')
			}
			if req.returnScores {
				b = append(b, `{"document":`...)
			}
			b = append(b, `{"id":`...)
			b = appendString(b, d.ID)
			b = append(b, `,"contents":`...)
			b = appendString(b, d.Contents)
			if req.urls {
				b = append(b, `,"url":`...)
				b = appendString(b, s.urlOf(hit.Row, d, docs != nil))
			}
			b = append(b, '}')
			if req.returnScores {
				b = append(b, `,"score":`...)
				b, _ = appendScore(b, hit.Score) // finite: checked in check
				b = append(b, '}')
			}
			if len(b) >= flushBytes {
				flush()
			}
		}
		b = append(b, ']')
		start = end
	}
	b = append(b, ']')
	if len(partial) > 0 {
		b = append(b, `,"partial":[`...)
		for i, p := range partial {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	if w.status == 0 && werr == nil {
		// Whole response in one buffer: let the client see its length.
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	flush()
	if werr != nil {
		w.errKind = kindWrite
		s.metrics.errors.WithLabelValues(kindWrite).Inc()
		s.log.Debug("server: write response", "err", werr)
	}
}
