package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// FuzzDialectBodies posts arbitrary bodies, as JSON and as MessagePack
// (no Content-Type), to every dialect path on every profile: never a 5xx
// (clients retry those), every error the JSON {"error", "field"}, every
// 200 valid in the encoding the client sent.
func FuzzDialectBodies(f *testing.F) {
	paths := []string{"/retrieve", "/queries", "/search", "/batch_search", "/retrieve/rerank", "/access"}
	for _, seed := range []string{
		`{"query":"paris","topk":3,"return_scores":true}`,
		`{"query":"paris","top_k":2}`,
		`{"query":"paris","k":1,"top_k":1}`,
		`{"query":["a"],"top_n":2,"return_score":true}`,
		`{"queries":["q1","q2"],"k":2}`,
		`{"queries":["q1"],"topk":2,"topk_retrieval":3}`,
		`{"urls":["https://en.wikipedia.org/wiki/Paris","Tokyo",""],"max_tokens":3,"max_bytes":300}`,
		`{"query":"","topk":0}`,
		`{"query":null,"queries":null}`,
		"\x83\xa5query\xa5paris\xa4topk\x03\xadreturn_scores\xc3",
		"\x81\xa7queries\x92\xa2q1\xa2q2",
		"\xdf\xff\xff\xff\xff",
		"\x81\xa1a\xc4\x01x",
	} {
		for p := range paths {
			for prof := range 3 {
				f.Add([]byte(seed), uint8(p), uint8(prof))
			}
		}
	}
	s := dialectServer(f, func(c *Config) {
		c.MaxQueries = 64
		c.MaxBodyBytes = 64 << 10
		c.Tokens = wordCounter{}
	})
	profiles := []Profile{ProfileSearchR1, ProfileBrowseComp, ProfileASearcher}
	f.Fuzz(func(t *testing.T, body []byte, p, prof uint8) {
		path := paths[int(p)%len(paths)]
		h := s.ProfileHandler(profiles[int(prof)%len(profiles)])
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s: status %d for body %q: %s", path, rec.Code, body, rec.Body)
		}
		out := rec.Body.Bytes()
		if rec.Header().Get("Content-Type") == MsgpackContentType {
			var v any
			if rec.Code != http.StatusOK || msgpack.Unmarshal(out, &v) != nil {
				t.Fatalf("%s: status %d, MessagePack answer does not decode: %q", path, rec.Code, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s: status %d, answer is not valid JSON: %q", path, rec.Code, out)
		}
		if rec.Code != http.StatusOK {
			var e struct {
				Error *string `json:"error"`
				Field *string `json:"field"`
			}
			if err := json.Unmarshal(out, &e); err != nil || e.Error == nil || e.Field == nil {
				t.Fatalf("%s: status %d without an error and a field: %s", path, rec.Code, out)
			}
		}
	})
}

// FuzzMsgpackToJSON: the transcoder never panics, and what it accepts is
// one valid JSON object whose values MessagePack's own decoder agrees
// with.
func FuzzMsgpackToJSON(f *testing.F) {
	for _, seed := range [][]byte{
		mustMsgpack(f, map[string]any{"query": "paris", "topk": 3, "return_scores": true}),
		mustMsgpack(f, map[string]any{"queries": []any{"a", 1.5, nil, []any{}}, "x": map[string]any{"y": -1}}),
		{0x80}, {0xde, 0x00, 0x01, 0xa1, 'a', 0xc0}, {0xdf, 0xff, 0xff, 0xff, 0xff}, {0x81, 0xa1, 'a', 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		js, err := msgpackToJSON(b)
		if err != nil {
			return
		}
		var fromJSON map[string]any
		if err := json.Unmarshal(js, &fromJSON); err != nil {
			t.Fatalf("%q transcoded to invalid JSON %q: %v", b, js, err)
		}
		var fromMsgpack map[string]any
		if err := msgpack.Unmarshal(b, &fromMsgpack); err != nil {
			t.Fatalf("accepted %q, which msgpack refuses: %v", b, err)
		}
		a, _ := json.Marshal(normalizeNumbers(fromMsgpack))
		c, _ := json.Marshal(normalizeNumbers(fromJSON))
		if !bytes.Equal(a, c) {
			t.Fatalf("%q: transcoded %s, msgpack decodes %s", b, c, a)
		}
	})
}
