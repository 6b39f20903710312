package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// respWriter records what a handler did for the access log and the
// metrics. It is used by one request's goroutine only.
type respWriter struct {
	http.ResponseWriter
	status  int
	bytes   int64
	queries int    // number of queries in a /retrieve request, -1 before parsing
	errKind string // set by fail
	errMsg  string // set by fail
	dialect string // the request's dialect, once known (rlsearch_unanswered_requests_total)
}

func (w *respWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *respWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument wraps h with panic recovery, metrics and the access log.
func (s *Server) instrument(endpoint string, h func(*respWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &respWriter{ResponseWriter: rw, queries: -1}
		if s.busy != nil { // nil for EndpointHandler's bare server
			s.busy.Add(1)
			defer s.busy.Add(-1)
		}
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as net/http does
					s.finish(endpoint, w, r, start)
					panic(p)
				}
				s.log.Error("server: panic in handler", "method", r.Method, "path", r.URL.Path,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if w.status == 0 {
					s.fail(w, http.StatusInternalServerError, kindPanic, "internal error (recovered panic)", "")
				} else {
					// The status line is out; a truncated 200 must not look
					// like a success, so drop the connection.
					w.errKind = kindPanic
					s.metrics.errors.WithLabelValues(kindPanic).Inc()
					s.finish(endpoint, w, r, start)
					panic(http.ErrAbortHandler)
				}
			}
			s.finish(endpoint, w, r, start)
		}()
		if s.slots != nil && endpoint != endpointHealthz && endpoint != endpointMetrics {
			if !s.admit(r) {
				w.Header().Set("Retry-After", retryAfter)
				s.fail(w, http.StatusServiceUnavailable, kindOverloaded, fmt.Sprintf("overloaded: %d requests in flight and %d waiting (--max-inflight); retry after %s s", cap(s.slots), cap(s.slots)*admissionQueue, retryAfter), "")
				return
			}
			defer func() { <-s.slots }()
		}
		h(w, r)
	})
}

// finish records the metrics and writes the access log line of a request.
func (s *Server) finish(endpoint string, w *respWriter, r *http.Request, start time.Time) {
	d := time.Since(start)
	status := w.status
	if status == 0 {
		status = http.StatusOK // net/http's default when nothing was written
	}
	if w.errKind == "" && status >= 400 {
		// A status written without fail (promhttp's own errors on
		// /metrics): count it by status so /metrics sees it too.
		w.errKind = kindForStatus(status)
		s.metrics.errors.WithLabelValues(w.errKind).Inc()
	}
	s.metrics.requests.WithLabelValues(endpoint, strconv.Itoa(status)).Inc()
	if status >= 400 && s.unans != nil {
		s.unans.note(w.dialect, endpoint, status, w.errKind, r.RemoteAddr, w.errMsg)
	}
	s.metrics.latency.WithLabelValues(endpoint).Observe(d.Seconds())
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	attrs := make([]slog.Attr, 0, 9)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		slog.Int64("bytes", w.bytes),
		slog.String("remote", r.RemoteAddr),
	)
	if w.queries >= 0 {
		attrs = append(attrs, slog.Int("queries", w.queries))
	}
	if w.errKind != "" {
		attrs = append(attrs, slog.String("error_kind", w.errKind))
	}
	s.log.LogAttrs(r.Context(), level, "http", attrs...)
}

// fail writes the JSON error body {"error": msg, "field": field} with the
// given status and counts it under kind.
func (s *Server) fail(w *respWriter, status int, kind, msg, field string) {
	w.errKind, w.errMsg = kind, msg
	s.metrics.errors.WithLabelValues(kind).Inc()
	writeError(w, status, msg, field)
}

// allowMethod answers 405 with an Allow header and a JSON error unless
// r.Method is one of methods.
func (s *Server) allowMethod(w *respWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	allow := strings.Join(methods, ", ")
	w.Header().Set("Allow", allow)
	s.fail(w, http.StatusMethodNotAllowed, kindMethod, "method "+r.Method+" not allowed; use "+allow, "")
	return false
}

// writeError answers status with the JSON body {"error": msg, "field":
// field} that every endpoint of this server uses; field names the request
// field at fault ("" for the body as a whole).
func writeError(w http.ResponseWriter, status int, msg, field string) {
	b := make([]byte, 0, len(msg)+len(field)+32)
	b = append(b, `{"error":`...)
	b = appendString(b, msg)
	b = append(b, `,"field":`...)
	b = appendString(b, field)
	b = append(b, "}\n"...)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(b)
}

// kindForStatus is the error kind of a status written by a handler that did
// not name one.
func kindForStatus(status int) string {
	switch {
	case status == http.StatusNotFound:
		return kindNotFound
	case status == http.StatusMethodNotAllowed:
		return kindMethod
	case status == http.StatusRequestEntityTooLarge:
		return kindTooLarge
	case status == http.StatusUnsupportedMediaType:
		return kindMediaType
	case status == http.StatusRequestTimeout:
		return kindReadTimeout
	case status == 499:
		return kindCanceled
	case status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return kindDeadline
	case status >= 500:
		return kindInternal
	}
	return kindBadRequest
}

// Admission control (Config.MaxInFlight): a request beyond the slots
// waits up to admissionWait for one, behind at most admissionQueue ×
// slots others (a waiting request has not read its body, so it costs a
// goroutine, not its decoded batch); past either it is refused.
const (
	admissionWait  = time.Second
	admissionQueue = 8
)

// admit takes a slot of s.slots for r, or reports false (503).
func (s *Server) admit(r *http.Request) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	if s.waiting.Add(1) > int64(admissionQueue*cap(s.slots)) {
		s.waiting.Add(-1)
		return false
	}
	defer s.waiting.Add(-1)
	t := time.NewTimer(admissionWait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-r.Context().Done():
		return false
	}
}
