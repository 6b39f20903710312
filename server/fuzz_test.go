package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzRetrieveBody posts arbitrary bodies to /retrieve: with a well-behaved
// backend the status is never 5xx (verl retries those ten times), every
// answer is valid JSON, and errors name a field.
func FuzzRetrieveBody(f *testing.F) {
	for _, seed := range []string{
		`{"queries":["paris"],"topk":3,"return_scores":true}`,
		`{"queries":["capital of france","japan"],"topk":1000,"retriever":"e5"}`,
		`{"queries":[]}`,
		`{"queries":["", " "]}`,
		`{"queries":[1,null]}`,
		`{"queries":"x","topk":"3"}`,
		`{"queries":["a"],"topk":1e400,"return_scores":"yes"}`,
		`{"queries":["a"],"topk":2.0}`,
		`{"queries":["\u0000\ud800 caf\u00e9"]}`,
		`{"queries":["a"]} trailing`,
		`[{"queries":["a"]}]`,
		`null`,
		``,
		`{"queries":["a"],"queries":[2]}`,
		`{"queries":["a"],"retriever":"nope"}`,
		`{"queries":["a"],"top_k":5,"Return-Scores":true}`,
		`{"queries":["a","b"],"topk":1000}`,
		"{\"queries\":[\"caf\xe9\"],\"x\":\"\xed\xa0\x80\"}",
	} {
		f.Add([]byte(seed))
	}
	s, _ := newTestServer(f, func(c *Config) {
		c.MaxQueries = 64
		c.MaxBodyBytes = 64 << 10
	})
	// The fuzzing backend has no trigger words.
	s.cfg.Retrievers["bm25"].(*tokenRetriever).tricks = false
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/retrieve", strings.NewReader(string(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
		}
		out := rec.Body.Bytes()
		if rec.Header().Get("Content-Type") == MsgpackContentType {
			// A MessagePack body (a map header as the first byte, no
			// Content-Type) is answered in MessagePack (GEM's dialect).
			var v map[string]any
			if rec.Code != http.StatusOK || msgpack.Unmarshal(out, &v) != nil {
				t.Fatalf("status %d, MessagePack answer does not decode: %q", rec.Code, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("status %d, answer is not valid JSON: %q", rec.Code, out)
		}
		if rec.Code != http.StatusOK {
			var e struct {
				Error *string `json:"error"`
				Field *string `json:"field"`
			}
			if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Field == nil {
				t.Fatalf("status %d without an error and a field: %s", rec.Code, out)
			}
		}
	})
}

// FuzzAppendString checks the response string encoder against
// encoding/json: same decoded text, always valid JSON.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"Title\"\ntext", "tab\there", "\x00\x1f\x7f", "caf\xc3\xa9", "\xff\xfe", "\u2028\u2029", "<&>", "\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Fatalf("appendString(%q) = %q is not valid JSON in UTF-8", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		std, _ := json.Marshal(s)
		var want string
		json.Unmarshal(std, &want)
		if back != want {
			t.Fatalf("appendString(%q) decodes to %q; encoding/json gives %q", s, back, want)
		}
	})
}

func TestAppendScore(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want string
	}{
		{0, "0"}, {1, "1"}, {-2.25, "-2.25"}, {0.3, "0.30000001192092896"},
		{1e-7, "1.0000000116860974e-7"}, {3e38, "3.0000000054977558e+38"}, {12345678, "12345678"},
	} {
		got, ok := appendScore(nil, tc.in)
		std, _ := json.Marshal(float64(tc.in))
		if !ok || string(got) != tc.want || string(got) != string(std) {
			t.Errorf("appendScore(%v) = %s, %v; want %s (encoding/json: %s)", tc.in, got, ok, tc.want, std)
		}
	}
}
