package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonbody"
	"github.com/rlsearch/rlsearch/internal/recovered"
)

// Endpoint is a JSON endpoint mounted through Config.Extra. Build one with
// JSON; the zero Endpoint is invalid. The server owns everything HTTP about
// it: POST only, the Content-Type policy, the body limit, decoding (see
// package jsonbody), the error → status mapping, the response encoding,
// the access log and the metrics.
type Endpoint struct {
	maxBody int64
	serve   func(ctx context.Context, body []byte) (any, error)
}

// EndpointOptions configure JSON.
type EndpointOptions struct {
	// MaxBodyBytes bounds the request body; 0 means Config.MaxBodyBytes.
	MaxBodyBytes int64
	// IgnoreUnknown lets keys that name no field of the request type pass
	// (for contracts whose clients send extras); near-misses of field
	// names are refused either way. By default unknown keys are a 400.
	IgnoreUnknown bool
}

// JSON returns an endpoint answering POST requests: the body is decoded
// into a Req (jsonbody.Decode: one object, UTF-8, at most
// jsonbody.MaxDepth levels, field paths in errors) and serve's Resp is
// encoded whole, before the status is written, as one JSON line (HTML
// characters not escaped). serve's errors are mapped by their kind (see
// the package documentation): wrap rlsearch.ErrBadInput (or return a
// *rlsearch.FieldError) for 400, rlsearch.ErrTooLarge for 413,
// rlsearch.ErrOverloaded for 503; a cancelled context is 499 or 503;
// anything else is 500. serve is called from many goroutines at once.
func JSON[Req, Resp any](serve func(context.Context, Req) (Resp, error), o EndpointOptions) Endpoint {
	unknown := jsonbody.Reject
	if o.IgnoreUnknown {
		unknown = jsonbody.Ignore
	}
	return Endpoint{maxBody: o.MaxBodyBytes, serve: func(ctx context.Context, body []byte) (any, error) {
		var req Req
		if err := jsonbody.Decode(body, &req, unknown); err != nil {
			return nil, err
		}
		return serve(ctx, req)
	}}
}

// handleEndpoint answers one request of ep.
func (s *Server) handleEndpoint(ep Endpoint) func(*respWriter, *http.Request) {
	max := ep.maxBody
	if max <= 0 {
		max = s.cfg.MaxBodyBytes
	}
	return func(w *respWriter, r *http.Request) {
		w.dialect = dialectRlsearch
		if !s.allowMethod(w, r, http.MethodPost) {
			return
		}
		body, err := s.readBody(w, r, max)
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		ctx, nt := withNotes(r.Context())
		resp, err := ep.serve(ctx, body)
		if _, unavailable := nt.result(); err == nil && unavailable != nil {
			err = unavailable
		}
		if err != nil {
			s.failErr(w, r, err)
			return
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(resp); err != nil {
			s.failErr(w, r, fmt.Errorf("encode response: %w", err))
			return
		}
		nt.flag(w)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(buf.Len()))
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(buf.Bytes()); err != nil {
			w.errKind = kindWrite
			s.metrics.errors.WithLabelValues(kindWrite).Inc()
		}
	}
}

// httpError is an error whose status the server decided itself (body
// limits, Content-Type, read timeouts).
type httpError struct {
	status int
	kind   string
	msg    string
	field  string
}

func (e *httpError) Error() string { return e.msg }

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = "1"

// classify maps an error to its status, metrics kind and field: the one
// error → status table of every endpoint (see the package documentation).
func classify(err error, ctx context.Context) (status int, kind, field string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.kind, he.field
	}
	var fp rlsearch.FieldPather
	if errors.As(err, &fp) {
		field = fp.FieldPath()
	}
	switch {
	case errors.Is(err, rlsearch.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, kindTooLarge, field
	case errors.Is(err, rlsearch.ErrBadInput):
		return http.StatusBadRequest, kindBadRequest, field
	case errors.Is(err, rlsearch.ErrOverloaded):
		return http.StatusServiceUnavailable, kindOverloaded, ""
	case errors.Is(err, recovered.ErrPanic):
		return http.StatusInternalServerError, kindPanic, ""
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return statusClientClosed, kindCanceled, ""
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, kindDeadline, ""
	}
	return http.StatusInternalServerError, kindInternal, ""
}

// failErr answers err with the status classify gives it; 5xx are logged,
// 503 carries Retry-After.
func (s *Server) failErr(w *respWriter, r *http.Request, err error) {
	status, kind, field := classify(err, r.Context())
	msg := err.Error()
	switch {
	case status == statusClientClosed:
		msg = "request canceled: " + msg
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", retryAfter)
	case status >= 500:
		s.log.Error("server: request failed", "path", r.URL.Path, "err", err)
	}
	s.fail(w, status, kind, msg, field)
}

// checkContentType accepts a missing Content-Type, JSON (application/json
// and any +json type) and text/plain (what some clients send for a string
// body), as well as anything not clearly another format; it refuses forms,
// XML and HTML with 415, which is what a client that forgot to send JSON
// (curl -d without -H, requests' data= with a dict) sends. An ambiguous
// Content-Type, sent twice or holding a list of types ("application/json,
// text/html": how a proxy joins two header lines), is a 400: Content-Type
// is a singleton field (RFC 9110 §8.3, §5.3), and taking the first, as
// Go's Header.Get does, would guess. One policy for every endpoint.
func checkContentType(r *http.Request) error {
	if v := r.Header.Values("Content-Type"); len(v) > 1 {
		return rlsearch.BadField("Content-Type", "%d Content-Type headers (%q): send exactly one, application/json", len(v), v)
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := strings.Cut(ct, ";")
	if strings.Contains(mt, ",") {
		return rlsearch.BadField("Content-Type", "Content-Type %q lists several media types: send exactly one, application/json", ct)
	}
	mt = strings.ToLower(strings.TrimSpace(mt))
	switch {
	case mt == "application/x-www-form-urlencoded",
		strings.HasPrefix(mt, "multipart/"),
		mt == "application/xml", mt == "text/xml", strings.HasSuffix(mt, "+xml"),
		mt == "text/html":
		return &httpError{status: http.StatusUnsupportedMediaType, kind: kindMediaType, field: "Content-Type",
			msg: fmt.Sprintf("Content-Type %q is not JSON; send the body as application/json (curl: -H 'Content-Type: application/json'; requests: json=...)", ct)}
	}
	return nil
}

func tooLarge(max int64) error {
	return &httpError{status: http.StatusRequestEntityTooLarge, kind: kindTooLarge,
		msg: fmt.Sprintf("request body exceeds %d bytes", max), field: ""}
}

// readBody checks the Content-Type and reads the whole body, at most max
// bytes (413 beyond, with one wording for every endpoint; 408 when it does
// not arrive within the read timeout).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if err := checkContentType(r); err != nil {
		return nil, err
	}
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
			return nil, &httpError{status: http.StatusRequestTimeout, kind: kindReadTimeout, field: "",
				msg: fmt.Sprintf("request body not received within the read timeout of %v (%d bytes arrived)", s.cfg.ReadTimeout, buf.Len())}
		default:
			return nil, rlsearch.BadField("", "read request body: %v", err)
		}
	}
	return buf.Bytes(), nil
}

// warnHandler drops records below Warn (the access log of
// EndpointHandler).
type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

// EndpointHandler serves ep alone, at any path, exactly as a Server
// mounts it (method, Content-Type, body limit, decoding, error mapping,
// panic recovery), with its metrics in a private registry and its warnings and errors
// logged to slog.Default(): for the domain packages' tests and for embedding one
// endpoint in another mux. A zero ep.MaxBodyBytes means
// DefaultMaxBodyBytes. Safe for concurrent use.
func EndpointHandler(ep Endpoint) http.Handler {
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		panic(err) // a fresh registry holds no metric yet
	}
	s := &Server{
		cfg:     Config{MaxBodyBytes: DefaultMaxBodyBytes, ReadTimeout: DefaultReadTimeout},
		log:     slog.New(warnHandler{slog.Default().Handler()}),
		metrics: m,
	}
	return s.instrument(endpointOther, s.handleEndpoint(ep))
}
