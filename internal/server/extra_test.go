package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestExtraEndpoints(t *testing.T) {
	srv, _ := newTestServer(t, func(c *Config) {
		c.Extra = map[string]http.Handler{
			"/v1/echo": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					WriteError(w, http.StatusMethodNotAllowed, "use POST", "")
					return
				}
				io.Copy(w, r.Body)
			}),
		}
	})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	resp, err := http.Post(ts.URL+"/v1/echo", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello" {
		t.Fatalf("POST /v1/echo: %d %q", resp.StatusCode, body)
	}
	resp, _ = http.Get(ts.URL + "/v1/echo")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || string(body) != `{"error":"use POST","field":""}`+"\n" {
		t.Fatalf("GET /v1/echo: %d %q", resp.StatusCode, body)
	}
	resp, _ = http.Get(ts.URL + "/metrics")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `endpoint="/v1/echo"`) {
		t.Error("/metrics has no series for the extra endpoint")
	}
	if !strings.Contains(string(body), `rlsearch_http_errors_total{kind="method"} 1`) {
		t.Error("/metrics does not count the extra endpoint's 405 as an error of kind method")
	}
	resp, _ = http.Get(ts.URL + "/v1/nope")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), "/v1/echo") {
		t.Errorf("404 should list the mounted endpoints: %d %s", resp.StatusCode, body)
	}
	for _, bad := range []map[string]http.Handler{
		{"v1/x": http.NotFoundHandler()},
		{"/retrieve": http.NotFoundHandler()},
		{"/v1/nil": nil},
	} {
		_, err := New(Config{Retrievers: srv.cfg.Retrievers, Default: srv.cfg.Default, Docs: srv.cfg.Docs, Extra: bad})
		if err == nil || !strings.Contains(err.Error(), "Config.Extra") {
			t.Errorf("Extra %v: error %v, want one naming Config.Extra", bad, err)
		}
	}
}
