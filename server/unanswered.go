package server

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Dialect labels beside those of the dialects (dialect.go).
const (
	dialectRlsearch = "rlsearch" // our own endpoints (programs, rewards, hybrid, /rerank, shard API)
	dialectMCP      = "mcp"      // the MCP server at /mcp
	dialectUnknown  = "unknown"  // not told yet: an unknown path, a body that never parsed
)

// pageDialect is the dialect label of a Config.Pages mount.
func pageDialect(path string) string {
	if path == "/mcp" || strings.HasPrefix(path, "/mcp/") {
		return dialectMCP
	}
	return dialectRlsearch
}

// unanswered counts and logs the requests the server could not answer
// (status ≥ 400) per dialect and route: three of the five Search-R1-style
// clients that work unchanged turn a server error into an empty
// <information> block, and SkyRL's, rLLM's, ReCall's, GEM's and
// BrowseComp-Plus's into text the model reads, so a run that trains on
// errors does not fail. rlsearch_unanswered_requests_total{dialect,
// route, code} counts every one; the log has one line for the first of a
// stream (dialect, route) and then at most one per interval with how many
// followed, from which client addresses, and the last error. Safe for
// concurrent use.
type unanswered struct {
	count *prometheus.CounterVec
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	streams map[[2]string]*stream
}

// stream is one (dialect, route)'s record since its last log line.
type stream struct {
	last    time.Time      // time of the last line
	n       int            // requests since it
	clients map[string]int // client host → requests since it (at most maxClients)
	code    int
	msg     string
	timer   *time.Timer // pending summary line, nil when none
}

const maxClients = 8

func newUnanswered(reg prometheus.Registerer, log *slog.Logger, every time.Duration) (*unanswered, error) {
	u := &unanswered{
		count: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rlsearch_unanswered_requests_total",
			Help: "Requests the server could not answer (status >= 400), by the client's dialect (searchr1, skyrl, rllm, gem, browsecomp, asearcher, r1searcher, recall, stepsearch, mcp, rlsearch, unknown), route and status code.",
		}, []string{"dialect", "route", "code"}),
		log:     log,
		every:   every,
		streams: map[[2]string]*stream{},
	}
	if err := reg.Register(u.count); err != nil {
		return nil, fmt.Errorf("server: register metrics: %w", err)
	}
	return u, nil
}

// note records one unanswered request.
func (u *unanswered) note(dialect, route string, code int, kind, remote, msg string) {
	if dialect == "" {
		dialect = dialectUnknown
	}
	u.count.WithLabelValues(dialect, route, strconv.Itoa(code)).Inc()
	host := remote
	if i := strings.LastIndexByte(remote, ':'); i > 0 {
		host = remote[:i]
	}
	key := [2]string{dialect, route}
	now := time.Now()
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.streams[key]
	if st == nil || (st.timer == nil && now.Sub(st.last) >= u.every) {
		// First of a stream, or the first after a quiet interval: log now.
		u.streams[key] = &stream{last: now, clients: map[string]int{}}
		u.log.Warn("server: unanswered request", "dialect", dialect, "route", route, "status", code, "kind", kind, "client", remote, "error", msg)
		return
	}
	st.n++
	if _, ok := st.clients[host]; ok || len(st.clients) < maxClients {
		st.clients[host]++
	}
	st.code, st.msg = code, msg
	if st.timer == nil {
		st.timer = time.AfterFunc(max(0, st.last.Add(u.every).Sub(now)), func() { u.flush(key) })
	}
}

// flush writes the summary line of a stream.
func (u *unanswered) flush(key [2]string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.streams[key]
	if st == nil || st.n == 0 {
		return
	}
	clients := make([]string, 0, len(st.clients))
	for c, n := range st.clients {
		clients = append(clients, c+" ("+strconv.Itoa(n)+")")
	}
	slices.Sort(clients)
	u.log.Warn("server: unanswered requests", "dialect", key[0], "route", key[1], "requests", st.n,
		"since", st.last.UTC().Format(time.RFC3339), "clients", strings.Join(clients, ", "), "last_status", st.code, "last_error", st.msg)
	u.streams[key] = &stream{last: time.Now(), clients: map[string]int{}}
}
