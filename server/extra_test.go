package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

type echoReq struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

type echoResp struct {
	Echo string `json:"echo"`
}

// TestExtraEndpoints: an endpoint mounted through Config.Extra is
// decoded, answered, instrumented and listed like the built-in ones.
func TestExtraEndpoints(t *testing.T) {
	srv, _ := newTestServer(t, func(c *Config) {
		c.Extra = map[string]Endpoint{
			"/v1/echo": JSON(func(_ context.Context, r echoReq) (echoResp, error) {
				if r.N < 0 {
					return echoResp{}, rlsearch.BadField("n", "n must be >= 0, got %d", r.N)
				}
				return echoResp{Echo: r.Text}, nil
			}, EndpointOptions{}),
		}
	})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, tc := range []struct {
		method, body string
		status       int
		want         string
	}{
		{"POST", `{"text":"<hello>"}`, 200, `{"echo":"<hello>"}` + "\n"},
		{"POST", `{"text":"x","n":-1}`, 400, `{"error":"n must be >= 0, got -1","field":"n"}` + "\n"},
		{"POST", `{"text":1}`, 400, `{"error":"text must be a string, got number","field":"text"}` + "\n"},
		{"POST", `{"Text":"x"}`, 400, `{"error":"unknown field \"Text\": did you mean \"text\"?","field":"Text"}` + "\n"},
		{"GET", ``, 405, `{"error":"method GET not allowed; use POST","field":""}` + "\n"},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+"/v1/echo", strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(body) != tc.want {
			t.Errorf("%s /v1/echo %s: %d %q, want %d %q", tc.method, tc.body, resp.StatusCode, body, tc.status, tc.want)
		}
	}
	resp, _ := http.Get(ts.URL + "/metrics")
	body, _ := io.ReadAll(resp.Body)
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
	if got := strings.Join(srv.Paths(), " "); got != "/access /batch_search /health /healthz /metrics /queries /retrieve /retrieve/rerank /search /v1/echo" {
		t.Errorf("Paths() = %s", got)
	}
	ok := JSON(func(context.Context, echoReq) (echoResp, error) { return echoResp{}, nil }, EndpointOptions{})
	for _, bad := range []map[string]Endpoint{
		{"v1/x": ok},
		{"/retrieve": ok},
		{"/queries": ok},
		{"/v1/nil": {}},
	} {
		_, err := New(Config{Retrievers: srv.cfg.Retrievers, Default: srv.cfg.Default, Docs: srv.cfg.Docs, Extra: bad})
		if err == nil || !strings.Contains(err.Error(), "Config.Extra") {
			t.Errorf("Extra %v: error %v, want one naming Config.Extra", bad, err)
		}
	}
}

// TestErrorMapping: the one error → status table of every JSON endpoint.
func TestErrorMapping(t *testing.T) {
	type resp struct {
		Score float64 `json:"score"`
	}
	for _, tc := range []struct {
		name       string
		err        error
		nan        bool
		cancel     bool
		status     int
		field      string
		retryAfter bool
	}{
		{"bad field", rlsearch.BadField("programs[2].code", "no code"), false, false, 400, "programs[2].code", false},
		{"bad input without field", fmt.Errorf("x: %w", rlsearch.ErrBadInput), false, false, 400, "", false},
		{"over a limit", rlsearch.TooLarge("programs", "5000 programs, at most 4096"), false, false, 413, "programs", false},
		{"overloaded", fmt.Errorf("queue full: %w", rlsearch.ErrOverloaded), false, false, 503, "", true},
		{"deadline", fmt.Errorf("encode: %w", context.DeadlineExceeded), false, false, 503, "", true},
		{"client gone", context.Canceled, false, true, 499, "", false},
		{"client gone, error not wrapped", errors.New("model stopped"), false, true, 499, "", false},
		{"our fault", errors.New("onnx: session failed"), false, false, 500, "", false},
		{"NaN in the response", nil, true, false, 500, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := EndpointHandler(JSON(func(ctx context.Context, r echoReq) (resp, error) {
				if tc.nan {
					return resp{Score: math.NaN()}, nil
				}
				return resp{}, tc.err
			}, EndpointOptions{}))
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			req := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(`{"text": "a"}`)).WithContext(ctx)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var e struct{ Error, Field string }
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != tc.status || e.Field != tc.field || e.Error == "" {
				t.Errorf("got %d %s, want %d naming field %q", rec.Code, rec.Body, tc.status, tc.field)
			}
			if got := rec.Header().Get("Retry-After") != ""; got != tc.retryAfter {
				t.Errorf("Retry-After %q, want one: %v", rec.Header().Get("Retry-After"), tc.retryAfter)
			}
		})
	}
}
