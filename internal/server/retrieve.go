package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rlsearch/rlsearch"
)

// retrieveRequest is a validated /retrieve request.
type retrieveRequest struct {
	queries      []string
	topK         int
	returnScores bool
	name         string // API name of the retriever
	retriever    rlsearch.Retriever
}

// badRequest is a client error: its status is 4xx and field names the
// request field at fault ("" for the body as a whole).
type badRequest struct {
	status int
	kind   string
	msg    string
	field  string
}

func bad(field, format string, args ...any) *badRequest {
	return &badRequest{status: http.StatusBadRequest, kind: kindBadRequest, msg: fmt.Sprintf(format, args...), field: field}
}

// retrieveFields are the fields of a /retrieve request, by their folded
// key (see NearMiss).
var retrieveFields = map[string]string{
	"queries":      "queries",
	"topk":         "topk",
	"returnscores": "return_scores",
	"retriever":    "retriever",
}

// NearMiss finds the first key of a decoded JSON object (in byte order)
// that is not a known field but folds to one: lower-cased, with '_' and
// '-' dropped, so that "top_k", "TopK" and "return-scores" meet the field
// they were meant to be. known maps folded keys to field names. Such a
// key is a typo that would otherwise be ignored and silently give the
// default; other unknown keys pass, as clients send extras. ok is false
// when there is none.
func NearMiss(fields map[string]json.RawMessage, known map[string]string) (key, want string, ok bool) {
	var miss []string
	for k := range fields {
		if name, hit := known[foldField(k)]; hit && k != name {
			miss = append(miss, k)
		}
	}
	if len(miss) == 0 {
		return "", "", false
	}
	slices.Sort(miss)
	return miss[0], known[foldField(miss[0])], true
}

func foldField(key string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, key)
}

// nearMiss is NearMiss over the /retrieve fields as a 400.
func nearMiss(fields map[string]json.RawMessage) *badRequest {
	key, want, ok := NearMiss(fields, retrieveFields)
	if !ok {
		return nil
	}
	return bad(key, "unknown field %q: did you mean %q?", key, want)
}

// checkContentType accepts a missing Content-Type, JSON (application/json
// and any +json type) and text/plain (what some clients send for a string
// body), as well as anything not clearly another format; it refuses forms,
// XML and HTML with 415, which is what a client that forgot to send JSON
// (curl -d without -H, requests' data= with a dict) sends.
func checkContentType(r *http.Request) *badRequest {
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "application/x-www-form-urlencoded",
		strings.HasPrefix(mt, "multipart/"),
		mt == "application/xml", mt == "text/xml", strings.HasSuffix(mt, "+xml"),
		mt == "text/html":
		return &badRequest{status: http.StatusUnsupportedMediaType, kind: kindMediaType, field: "Content-Type",
			msg: fmt.Sprintf("Content-Type %q is not JSON; send the body as application/json (curl: -H 'Content-Type: application/json'; requests: json=...)", ct)}
	}
	return nil
}

// readBody reads the whole body, at most max bytes, and checks that it is
// UTF-8: encoding/json would silently turn invalid bytes inside a string
// into U+FFFD and answer for a query the client never sent.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, *badRequest) {
	if r.ContentLength > max {
		return nil, tooLarge(max)
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // ReadFrom wants MinRead spare bytes per read
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, max)); err != nil {
		var (
			mbe *http.MaxBytesError
			ne  net.Error
		)
		switch {
		case errors.As(err, &mbe):
			return nil, tooLarge(max)
		case errors.As(err, &ne) && ne.Timeout():
			return nil, &badRequest{status: http.StatusRequestTimeout, kind: kindReadTimeout, field: "",
				msg: fmt.Sprintf("request body not received within the read timeout of %v (%d bytes arrived)", s.cfg.ReadTimeout, buf.Len())}
		default:
			return nil, bad("", "read request body: %v", err)
		}
	}
	b := buf.Bytes()
	if off := invalidUTF8(b); off >= 0 {
		return nil, bad("", "request body is not valid UTF-8: byte 0x%02x at byte offset %d (0-based) starts no valid UTF-8 sequence", b[off], off)
	}
	return b, nil
}

// invalidUTF8 returns the offset of the first byte of b that starts no
// valid UTF-8 sequence, or -1 when b is valid UTF-8.
func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1 // not reached: utf8.Valid said otherwise
}

// parseRetrieve reads and validates the body of a /retrieve request. The
// body is decoded into json.RawMessage values and each field's type is
// checked here so that the messages can say precisely what is wrong.
func (s *Server) parseRetrieve(w http.ResponseWriter, r *http.Request) (*retrieveRequest, *badRequest) {
	if b := checkContentType(r); b != nil {
		return nil, b
	}
	max := s.cfg.MaxBodyBytes
	body, b := s.readBody(w, r, max)
	if b != nil {
		return nil, b
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, bodyError(err, max)
	}
	if fields == nil {
		return nil, bad("", "request body must be a JSON object, got null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("", "invalid JSON: unexpected data after the top-level object")
	}
	if b := nearMiss(fields); b != nil {
		return nil, b
	}

	req := &retrieveRequest{topK: defaultTopK, name: s.cfg.Default}

	// "queries": required list of strings.
	raw, ok := fields["queries"]
	if !ok {
		return nil, bad("queries", `missing required field "queries" (a list of strings)`)
	}
	if kind := jsonKind(raw); kind != "list" {
		return nil, bad("queries", "queries must be a list of strings, got %s", kind)
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, bad("queries", "queries must be a list of strings: %v", err)
	}
	if len(elems) > s.cfg.MaxQueries {
		return nil, &badRequest{status: http.StatusRequestEntityTooLarge, kind: kindTooLarge,
			msg: fmt.Sprintf("too many queries: %d > %d per request; split the batch", len(elems), s.cfg.MaxQueries), field: "queries"}
	}
	req.queries = make([]string, len(elems))
	for i, e := range elems {
		if kind := jsonKind(e); kind != "string" {
			return nil, bad("queries", "queries[%d] must be a string, got %s", i, kind)
		}
		if err := json.Unmarshal(e, &req.queries[i]); err != nil {
			return nil, bad("queries", "queries[%d]: %v", i, err)
		}
	}

	// "topk": optional positive integer, at most MaxTopK.
	if raw, ok := fields["topk"]; ok && jsonKind(raw) != "null" {
		k, b := parseTopK(raw, s.cfg.MaxTopK)
		if b != nil {
			return nil, b
		}
		req.topK = k
	}
	// Hits asked for, counted before any work: a 50 KB body of 4096
	// queries at topk 1000 would otherwise stream gigabytes.
	if n := len(req.queries) * req.topK; n > s.cfg.MaxResults {
		return nil, &badRequest{status: http.StatusRequestEntityTooLarge, kind: kindTooLarge, field: "topk",
			msg: fmt.Sprintf("too many results: %d queries x topk %d = %d, over the limit of %d results per request; lower topk or split the batch",
				len(req.queries), req.topK, n, s.cfg.MaxResults)}
	}

	// "return_scores": optional boolean.
	if raw, ok := fields["return_scores"]; ok {
		switch kind := jsonKind(raw); kind {
		case "null":
		case "bool":
			req.returnScores = raw[0] == 't'
		default:
			return nil, bad("return_scores", "return_scores must be a boolean (true or false), got %s", kind)
		}
	}

	// "retriever": optional name, our extension.
	if raw, ok := fields["retriever"]; ok && jsonKind(raw) != "null" {
		if kind := jsonKind(raw); kind != "string" {
			return nil, bad("retriever", "retriever must be a string, one of %s; got %s", strings.Join(s.names, ", "), kind)
		}
		var name string
		if err := json.Unmarshal(raw, &name); err != nil {
			return nil, bad("retriever", "retriever: %v", err)
		}
		req.name = name
	}
	req.retriever = s.cfg.Retrievers[req.name]
	if req.retriever == nil {
		return nil, bad("retriever", "unknown retriever %q; available: %s", req.name, strings.Join(s.names, ", "))
	}
	return req, nil
}

func tooLarge(max int64) *badRequest {
	return &badRequest{status: http.StatusRequestEntityTooLarge, kind: kindTooLarge,
		msg: fmt.Sprintf("request body exceeds %d bytes", max), field: ""}
}

// bodyError turns a json.Decoder error on the whole body into a client
// error.
func bodyError(err error, max int64) *badRequest {
	var (
		mbe *http.MaxBytesError
		se  *json.SyntaxError
		ute *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mbe):
		return tooLarge(max)
	case errors.Is(err, io.EOF):
		return bad("", "empty request body; want a JSON object with \"queries\"")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return bad("", "invalid JSON: unexpected end of input")
	case errors.As(err, &se):
		return bad("", "invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &ute):
		return bad("", "request body must be a JSON object, got %s", ute.Value)
	default:
		return bad("", "read request body: %v", err)
	}
}

// jsonKind names the type of a syntactically valid JSON value in the
// words of the error messages.
func jsonKind(raw json.RawMessage) string {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			return "string"
		case '[':
			return "list"
		case '{':
			return "object"
		case 't', 'f':
			return "bool"
		case 'n':
			return "null"
		default:
			return "number"
		}
	}
	return "nothing"
}

// parseTopK accepts a JSON number with an integral value in [0, max]
// (1.0 and 1e2 included, as Python clients may compute topk as a float).
// 0 means defaultTopK, as in Search-R1's retrieval_server.py (`if not
// request.topk: request.topk = config.retrieval_topk`).
func parseTopK(raw json.RawMessage, max int) (int, *badRequest) {
	kind := jsonKind(raw)
	if kind != "number" {
		return 0, bad("topk", "topk must be an integer, got %s", kind)
	}
	text := strings.TrimSpace(string(raw))
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil && !errors.Is(ferr, strconv.ErrRange) {
			return 0, bad("topk", "topk must be an integer, got %s", text)
		}
		if f != math.Trunc(f) {
			return 0, bad("topk", "topk must be an integer, got %s", text)
		}
		if f < 0 || f > float64(max) {
			return 0, topKRange(max, text)
		}
		n = int64(f)
	}
	if n < 0 || n > int64(max) {
		return 0, topKRange(max, text)
	}
	if n == 0 {
		return defaultTopK, nil
	}
	return int(n), nil
}

func topKRange(max int, text string) *badRequest {
	return bad("topk", "topk must be between 1 and %d (0 or absent means %d), got %s", max, defaultTopK, text)
}

// handleRetrieve answers POST /retrieve. Every query is searched (in
// chunks, see search) and every score checked before the first byte is
// written, so that a retrieval failure is a proper 4xx/5xx; only the
// documents are fetched while the response streams (writeResult).
func (s *Server) handleRetrieve(w *respWriter, r *http.Request) {
	if !s.allowMethod(w, r, http.MethodPost) {
		return
	}
	req, b := s.parseRetrieve(w, r)
	if b != nil {
		s.fail(w, b.status, b.kind, b.msg, b.field)
		return
	}
	w.queries = len(req.queries)
	s.metrics.batchSize.Observe(float64(len(req.queries)))

	hits, ends, err := s.search(r.Context(), req)
	if err != nil {
		s.retrieveFailed(w, r, req.name, err)
		return
	}
	s.writeResult(w, r, req, hits, ends)
}

// search runs the request's retriever on its non-blank queries, at most
// Config.ChunkQueries per Retrieve call, and checks and compacts each
// chunk's lists as soon as they return (see check), so that what a request
// holds beyond its body is the flat hit array, len(queries) × topk × 8
// bytes at most (2.6 MB for 32,768 × 10), plus one chunk's lists. Blank
// (empty or whitespace-only) queries get an empty list without reaching
// the retriever. The result is flat: list i is hits[ends[i-1]:ends[i]].
func (s *Server) search(ctx context.Context, req *retrieveRequest) ([]rlsearch.Hit, []int, error) {
	n := len(req.queries)
	ends := make([]int, n)
	hits := make([]rlsearch.Hit, 0, min(n*req.topK, 1<<20)) // n*topK ≤ Config.MaxResults; lists may be shorter
	chunk := s.cfg.ChunkQueries
	var (
		qs   []string
		idx  []int
		seen map[int32]struct{}
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
		var lists [][]rlsearch.Hit
		if len(qs) > 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			start := time.Now()
			got, err := req.retriever.Retrieve(ctx, qs, req.topK)
			s.metrics.retrieval.WithLabelValues(req.name).Observe(time.Since(start).Seconds())
			s.metrics.queriesTot.WithLabelValues(req.name).Add(float64(len(qs)))
			if err != nil {
				return nil, nil, err
			}
			if len(got) != len(qs) {
				return nil, nil, fmt.Errorf("retriever %s returned %d lists for %d queries", req.name, len(got), len(qs))
			}
			lists = got
		}
		j := 0
		for i := lo; i < hi; i++ {
			if j < len(idx) && idx[j] == i {
				var err error
				if hits, seen, err = s.check(req, i, lists[j], hits, seen); err != nil {
					return nil, nil, err
				}
				j++
			}
			ends[i] = len(hits)
		}
		lo = hi
	}
	return hits, ends, nil
}

// errBadScore marks a NaN or infinite score, which JSON cannot carry.
var errBadScore = errors.New("server: retriever returned a NaN or infinite score")

// check appends the hits of query i's list l to hits, cleaned: it drops
// padding rows (< 0) and repeated rows and cuts the list to topk, and it
// fails on rows outside the corpus and on scores JSON cannot represent,
// naming the query. seen is scratch space kept between calls.
func (s *Server) check(req *retrieveRequest, i int, l []rlsearch.Hit, hits []rlsearch.Hit, seen map[int32]struct{}) ([]rlsearch.Hit, map[int32]struct{}, error) {
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
	for _, h := range l {
		if len(hits)-start >= req.topK {
			break
		}
		if h.Row < 0 {
			continue // padding id from a short top-k; never a document
		}
		if int(h.Row) >= n {
			return nil, seen, fmt.Errorf("retriever %s returned row %d outside the corpus of %d documents for queries[%d] %s", req.name, h.Row, n, i, quoteShort(req.queries[i]))
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
			return nil, seen, fmt.Errorf("retriever %s scored %v for queries[%d] %s, row %d: %w", req.name, h.Score, i, quoteShort(req.queries[i]), h.Row, errBadScore)
		}
		hits = append(hits, h)
	}
	return hits, seen, nil
}

// quoteShort quotes s for an error message, cut to its first 80 bytes.
func quoteShort(s string) string {
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

// retrieveFailed answers a failed retrieval: 400 for rlsearch.ErrBadInput,
// 499 when the client went away, 503 on a deadline, 500 otherwise.
func (s *Server) retrieveFailed(w *respWriter, r *http.Request, name string, err error) {
	switch {
	case errors.Is(err, rlsearch.ErrBadInput):
		s.fail(w, http.StatusBadRequest, kindRetrieverInput, "retriever "+name+": "+err.Error(), "queries")
	case errors.Is(err, context.Canceled) || errors.Is(r.Context().Err(), context.Canceled):
		s.fail(w, statusClientClosed, kindCanceled, "request canceled: "+err.Error(), "")
	case errors.Is(err, context.DeadlineExceeded):
		s.fail(w, http.StatusServiceUnavailable, kindDeadline, "retrieval timed out: "+err.Error(), "")
	default:
		s.log.Error("server: retrieval failed", "retriever", name, "err", err)
		s.fail(w, http.StatusInternalServerError, kindInternal, "retrieval failed: "+err.Error(), "")
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
func (s *Server) writeResult(w *respWriter, r *http.Request, req *retrieveRequest, hits []rlsearch.Hit, ends []int) {
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
			d, err := s.cfg.Docs.Doc(hit.Row)
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
	b = append(b, "]}"...)
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
