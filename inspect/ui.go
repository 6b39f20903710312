package inspect

import (
	"embed"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/sdk"
)

//go:embed assets
var assets embed.FS

// asset returns an embedded file of assets/.
func asset(name string) []byte {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic("inspect: missing embedded asset " + name) // a build without the assets cannot happen: go:embed fails
	}
	return b
}

// uiCSP is the Content-Security-Policy of the served page: scripts,
// styles and requests from the same origin only, no inline script, no
// plugins, no framing. Nothing from a rollout can execute even if it were
// ever parsed as HTML.
const uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// UIConfig configures NewUI.
type UIConfig struct {
	// Dumps are shown in this order (they may still be loading).
	Dumps []*Dump
	// Tracer replays programs when the page asks (nil = no replay).
	Tracer *Tracer
}

// UI serves the inspector page and its read-only JSON API. Mount it under
// a prefix with http.StripPrefix (`rlsearch serve` mounts it at /ui/):
//
//	GET /                 the page (index.html, app.js, app.css)
//	GET /api/config       {"live": true, "trace": bool, "budgets": {...}, "dumps": [DumpStatus]}
//	GET /api/summary      ?dump=N: Summary
//	GET /api/rows         ?dump=N&q=&pattern=&code=&format=&cell=&bin=&sort=&desc=1&offset=&limit=: Page
//	GET /api/rollout      ?dump=N&i=I[&trace=1]: Rollout (trace: programs replayed)
//
// The page runs programs, mutations and rewards through the server's own
// POST /v1/programs/execute, /v1/programs/mutate and /v1/rewards/rpl
// (relative to the mount: ../v1/…). Bad parameters are a 400 with
// {"error", "field"} naming the parameter; a dump still loading is a 503
// with Retry-After; one that failed to load, a 500 with the reason.
// Safe for concurrent use.
type UI struct {
	cfg UIConfig
}

// NewUI returns the handler of cfg.
func NewUI(cfg UIConfig) *UI { return &UI{cfg: cfg} }

func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeErr(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed; the inspector is read-only (GET, HEAD)", "")
		return
	}
	p := r.URL.Path
	switch {
	case p == "/" || p == "" || p == "/index.html":
		serveAsset(w, "index.html", "text/html; charset=utf-8")
	case p == "/app.js":
		serveAsset(w, "app.js", "text/javascript; charset=utf-8")
	case p == "/app.css":
		serveAsset(w, "app.css", "text/css; charset=utf-8")
	case strings.HasPrefix(p, "/api/"):
		u.api(w, r, strings.TrimPrefix(p, "/api/"))
	default:
		writeErr(w, http.StatusNotFound, "no such page: "+p+" (the inspector is at /, its API under /api/)", "")
	}
}

func serveAsset(w http.ResponseWriter, name, ctype string) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	w.Write(asset(name))
}

// writeErr answers {"error", "field"}, the error body of every endpoint.
func writeErr(w http.ResponseWriter, status int, msg, field string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
		Field string `json:"field"`
	}{msg, field})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "encode response: "+err.Error(), "")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

// fail maps err to its status: a *rlsearch.FieldError or ErrBadInput 400,
// ErrNotReady 503 while loading (500 when the load failed), ErrChanged
// 409, else 500.
func (u *UI) fail(w http.ResponseWriter, err error) {
	var fe *rlsearch.FieldError
	switch {
	case errors.As(err, &fe):
		writeErr(w, http.StatusBadRequest, err.Error(), fe.FieldPath())
	case errors.Is(err, rlsearch.ErrBadInput):
		writeErr(w, http.StatusBadRequest, err.Error(), "")
	case errors.Is(err, ErrNotReady) && strings.Contains(err.Error(), "still loading"):
		writeErr(w, http.StatusServiceUnavailable, err.Error(), "")
	case errors.Is(err, ErrChanged):
		writeErr(w, http.StatusConflict, err.Error(), "")
	default:
		writeErr(w, http.StatusInternalServerError, err.Error(), "")
	}
}

// uiConfig is GET /api/config.
type uiConfig struct {
	Live    bool         `json:"live"`
	Trace   bool         `json:"trace"`
	Budgets *sdk.Budgets `json:"budgets,omitempty"`
	Dumps   []DumpStatus `json:"dumps"`
}

func (u *UI) api(w http.ResponseWriter, r *http.Request, name string) {
	q := r.URL.Query()
	if name == "config" || name == "dumps" {
		c := uiConfig{Live: true, Trace: u.cfg.Tracer != nil, Dumps: []DumpStatus{}}
		if u.cfg.Tracer != nil {
			b := u.cfg.Tracer.Budgets()
			c.Budgets = &b
		}
		for _, d := range u.cfg.Dumps {
			c.Dumps = append(c.Dumps, d.Status())
		}
		writeJSON(w, c)
		return
	}
	d, err := u.dump(q.Get("dump"))
	if err != nil {
		u.fail(w, err)
		return
	}
	switch name {
	case "summary":
		s, err := d.Summary()
		if err != nil {
			u.fail(w, err)
			return
		}
		writeJSON(w, s)
	case "rows":
		qq, err := parseQuery(q)
		if err != nil {
			u.fail(w, err)
			return
		}
		p, err := d.Page(qq)
		if err != nil {
			u.fail(w, err)
			return
		}
		writeJSON(w, p)
	case "rollout":
		i, err := intParam(q.Get("i"), "i", -1)
		if err != nil {
			u.fail(w, err)
			return
		}
		var tr *Tracer
		if b := q.Get("trace"); b == "1" || b == "true" {
			if u.cfg.Tracer == nil {
				u.fail(w, rlsearch.BadField("trace", "this server has no program runtime to replay programs with"))
				return
			}
			tr = u.cfg.Tracer
		}
		ro, err := d.Rollout(r.Context(), i, tr)
		if err != nil {
			u.fail(w, err)
			return
		}
		writeJSON(w, ro)
	default:
		writeErr(w, http.StatusNotFound, "no such API: /api/"+name+" (have config, summary, rows, rollout)", "")
	}
}

func (u *UI) dump(s string) (*Dump, error) {
	i, err := intParam(s, "dump", 0)
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(u.cfg.Dumps) {
		return nil, rlsearch.BadField("dump", "dump %d: %d dumps are loaded (serve --inspect FILE adds one)", i, len(u.cfg.Dumps))
	}
	return u.cfg.Dumps[i], nil
}

// intParam parses a query parameter; "" gives def (def < 0: required).
func intParam(s, name string, def int) (int, error) {
	if s == "" {
		if def < 0 {
			return 0, rlsearch.BadField(name, "missing parameter %s", name)
		}
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, rlsearch.BadField(name, "%s=%q is not an integer", name, s)
	}
	return n, nil
}

// queryParams are the parameters GET /api/rows reads.
var queryParams = []string{"dump", "q", "pattern", "code", "format", "cell", "bin", "sort", "desc", "offset", "limit"}

// parseQuery reads a Query from URL parameters; an unknown parameter is
// a 400 naming it.
func parseQuery(v map[string][]string) (Query, error) {
	for k := range v {
		known := false
		for _, p := range queryParams {
			known = known || k == p
		}
		if !known {
			return Query{}, rlsearch.BadField(k, "unknown parameter %q (have %s)", k, strings.Join(queryParams, ", "))
		}
	}
	get := func(k string) string {
		if s := v[k]; len(s) > 0 {
			return s[0]
		}
		return ""
	}
	q := Query{Text: get("q"), Pattern: get("pattern"), Code: get("code"), Format: get("format"), Cell: get("cell"), Bin: get("bin"), Sort: get("sort")}
	switch d := get("desc"); d {
	case "", "0", "false":
	case "1", "true":
		q.Desc = true
	default:
		return Query{}, rlsearch.BadField("desc", "desc=%q: want 1 or 0", d)
	}
	var err error
	if q.Offset, err = intParam(get("offset"), "offset", 0); err != nil {
		return Query{}, err
	}
	if q.Limit, err = intParam(get("limit"), "limit", 0); err != nil {
		return Query{}, err
	}
	return q, nil
}
