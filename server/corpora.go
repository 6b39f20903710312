package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rlsearch/rlsearch/internal/jsonbody"
)

// Corpora serves several corpora from one process, one Server each: a
// request for /c/NAME/PATH is answered by corpus NAME's server as PATH
// (every endpoint, /healthz and /metrics included, so that each corpus has
// its own health and metrics), any other path by the listener's corpus
// (the first one by default). Program and reward requests (POST
// /v1/programs/*, /v1/rewards/*) may also name their corpus in a
// top-level "corpus" field, which is removed before the corpus's endpoint
// decodes the body; a "corpus" that names no corpus, or another than the
// path's /c/NAME, is a 400. A corpus's answers are those of a server of
// that corpus alone: the routing adds nothing to them. Safe for
// concurrent use.
type Corpora struct {
	names   []string
	servers map[string]*Server
}

// corpusName is what a corpus may be called: a path segment.
var corpusName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// CorpusPrefix is the path prefix that selects a corpus: /c/NAME/...
const CorpusPrefix = "/c/"

// maxCorpusPeek bounds the program and reward bodies Corpora reads to
// look for "corpus": sdk.DefaultMaxBodyBytes (64 MiB), the largest of
// those endpoints' limits; a larger body is passed on unread for the
// endpoint's own 413.
const maxCorpusPeek = 64 << 20

// NewCorpora routes over servers[i] named names[i]; names[0] is the
// default. Names must be distinct path segments ([A-Za-z0-9][A-Za-z0-9_.-]*).
func NewCorpora(names []string, servers []*Server) (*Corpora, error) {
	if len(names) == 0 || len(names) != len(servers) {
		return nil, fmt.Errorf("server: NewCorpora: %d names for %d servers", len(names), len(servers))
	}
	c := &Corpora{names: slices.Clone(names), servers: map[string]*Server{}}
	for i, n := range names {
		if !corpusName.MatchString(n) {
			return nil, fmt.Errorf("server: corpus name %q: want letters, digits, '_', '-' and '.', starting with a letter or digit", n)
		}
		if _, dup := c.servers[n]; dup {
			return nil, fmt.Errorf("server: corpus %q named twice", n)
		}
		if servers[i] == nil {
			return nil, fmt.Errorf("server: corpus %q has no server", n)
		}
		c.servers[n] = servers[i]
	}
	return c, nil
}

// Names returns the corpora's names, the default first.
func (c *Corpora) Names() []string { return slices.Clone(c.names) }

// Server returns corpus name's server (nil for an unknown name).
func (c *Corpora) Server(name string) *Server { return c.servers[name] }

// Handler answers as profile p, with corpus ("" = the default) for paths
// without /c/NAME. It returns an error for an unknown corpus.
func (c *Corpora) Handler(p Profile, corpus string) (http.Handler, error) {
	if corpus == "" {
		corpus = c.names[0]
	}
	def := c.servers[corpus]
	if def == nil {
		return nil, fmt.Errorf("server: unknown corpus %q (have %s)", corpus, strings.Join(c.names, ", "))
	}
	handlers := map[string]http.Handler{}
	for n, s := range c.servers {
		handlers[n] = s.ProfileHandler(p)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, path := corpus, r.URL.Path
		prefixed := strings.HasPrefix(path, CorpusPrefix)
		if prefixed {
			rest := path[len(CorpusPrefix):]
			var ok bool
			name, rest, ok = strings.Cut(rest, "/")
			if c.servers[name] == nil || !ok {
				def.answerError(w, r, http.StatusNotFound, kindNotFound, fmt.Sprintf("no corpus %q: the corpora are %s (paths /c/NAME/retrieve, /c/NAME/healthz, ...)", name, strings.Join(c.names, ", ")), "")
				return
			}
			r = stripPath(r, "/"+rest)
		}
		if r.Method == http.MethodPost && (strings.HasPrefix(r.URL.Path, "/v1/programs/") || strings.HasPrefix(r.URL.Path, "/v1/rewards/")) {
			var err error
			if name, err = c.bodyCorpus(r, name, prefixed); err != nil {
				fe := err.(*corpusError)
				c.servers[name].answerError(w, r, fe.status, fe.kind, fe.msg, fe.field)
				return
			}
		}
		handlers[name].ServeHTTP(w, r)
	}), nil
}

type corpusError struct {
	status     int
	kind       string
	msg, field string
}

func (e *corpusError) Error() string { return e.msg }

// bodyCorpus reads r's body and, when it is a JSON object with a top-level
// "corpus", removes that member and returns the corpus it names; r's body
// is replaced by what the endpoint must decode. name is the path's (or
// listener's) corpus, fixed when the path said /c/NAME.
func (c *Corpora) bodyCorpus(r *http.Request, name string, fixed bool) (string, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCorpusPeek+1))
	if err != nil {
		// Let the endpoint's own reader meet (and name) the failure.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		return name, nil
	}
	if len(body) > maxCorpusPeek {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
		return name, nil
	}
	set := func(b []byte) {
		r.Body = io.NopCloser(bytes.NewReader(b))
		r.ContentLength = int64(len(b))
		r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	}
	set(body)
	if !bytes.Contains(body, []byte(`"corpus"`)) {
		return name, nil
	}
	fields, err := jsonbody.Object(body)
	if err != nil {
		return name, nil // the endpoint answers the malformed body
	}
	raw, ok := fields["corpus"]
	if !ok {
		return name, nil
	}
	var want string
	if err := json.Unmarshal(raw, &want); err != nil || jsonbody.Kind(raw) != "string" {
		return name, &corpusError{http.StatusBadRequest, kindBadRequest, fmt.Sprintf("corpus must be a string, one of %s; got %s", strings.Join(c.names, ", "), jsonbody.Kind(raw)), "corpus"}
	}
	switch {
	case c.servers[want] == nil:
		return name, &corpusError{http.StatusBadRequest, kindBadRequest, fmt.Sprintf("unknown corpus %q; the corpora are %s", want, strings.Join(c.names, ", ")), "corpus"}
	case fixed && want != name:
		return name, &corpusError{http.StatusBadRequest, kindBadRequest, fmt.Sprintf("corpus %q in the body, but the path names corpus %q (/c/%s/...): give one", want, name, name), "corpus"}
	}
	delete(fields, "corpus")
	b, err := json.Marshal(fields)
	if err != nil {
		return name, &corpusError{http.StatusBadRequest, kindBadRequest, "re-encode the body without corpus: " + err.Error(), ""}
	}
	set(b)
	return want, nil
}

// stripPath returns r with its path replaced (the /c/NAME prefix cut).
func stripPath(r *http.Request, path string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = path, ""
	r2.URL = &u
	return r2
}

// answerError answers an error of the corpora layer through s's
// instrumentation (access log, metrics under "other", unanswered count).
func (s *Server) answerError(w http.ResponseWriter, r *http.Request, status int, kind, msg, field string) {
	s.instrument(endpointOther, func(w *respWriter, r *http.Request) { s.fail(w, status, kind, msg, field) }).ServeHTTP(w, r)
}
