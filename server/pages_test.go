package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Config.Pages mounts plain handlers by pattern (subtrees included),
// counted in the metrics under the pattern and listed by Paths; bad
// patterns are refused.
func TestPages(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("page " + r.URL.Path))
	})
	s, _ := newTestServer(t, func(c *Config) { c.Pages = map[string]http.Handler{"/ui/": page} })
	for _, p := range []string{"/ui/", "/ui/api/rows"} {
		code, _, body := do(t, s.Handler(), "GET", p, "")
		if code != 200 || body != "page "+p {
			t.Errorf("GET %s: %d %q; want the page's answer", p, code, body)
		}
	}
	if !slices.Contains(s.Paths(), "/ui/") {
		t.Errorf("Paths %v lacks /ui/", s.Paths())
	}
	_, _, metrics := do(t, s.Handler(), "GET", "/metrics", "")
	if !strings.Contains(metrics, `rlsearch_http_requests_total{code="200",endpoint="/ui/"} 2`) {
		t.Errorf("the page's requests are not counted under /ui/")
	}
	if code, _, body := do(t, s.Handler(), "GET", "/nope", ""); code != 404 || !strings.Contains(body, "/ui/") {
		t.Errorf("404 %d %q should list /ui/", code, body)
	}
	for _, bad := range []map[string]http.Handler{{"ui/": page}, {"/": page}, {"/retrieve": page}, {"/x/": nil}} {
		c := Config{Retrievers: s.cfg.Retrievers, Docs: testCorpus, Pages: bad}
		if err := c.Validate(); err == nil {
			t.Errorf("Pages %v: Validate accepted it", bad)
		}
	}
}
