package hybrid

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

func TestHandler(t *testing.T) {
	c := shipped(t, "amazon_toys")
	svc := NewService(map[string]*Collection{"amazon_toys": c}, ServiceConfig{})
	h := server.EndpointHandler(server.JSON(svc.Serve, server.EndpointOptions{MaxBodyBytes: DefaultMaxBodyBytes}))
	post := func(body string) (*httptest.ResponseRecorder, map[string]any) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/hybrid/execute", strings.NewReader(body)))
		var out map[string]any
		json.Unmarshal(rec.Body.Bytes(), &out)
		return rec, out
	}
	rec, out := post(`{"collection":"amazon_toys","topk":3,"programs":[
		{"sql":"WHERE brand = 'Hornby' AND product_id IN <text_0>","retrieval_list":[{"type":"text","field":"title","query":"coach"}]},
		{"sql":"WHERE brand = 'Children's Toys'","retrieval_list":[]},
		{"sql":"WHERE price > 1","retrieval_list":[{"type":"text","field":"colour","query":"red"}]},
		"not an object",
		{"sql":"WHERE brand = 'no such brand'","retrieval_list":[]}]}`)
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	res := out["results"].([]any)
	first := res[0].(map[string]any)
	if ids := first["ids"].([]any); len(ids) == 0 || len(ids) > 3 || first["total"].(float64) < float64(len(ids)) {
		t.Fatalf("first result %v", first)
	}
	wantField := []string{"", "programs[1].sql", "programs[2].retrieval_list[0].field", "programs[3]"}
	for i := 1; i < 4; i++ {
		it := res[i].(map[string]any)
		if it["field"] != wantField[i] || it["error"] == "" {
			t.Fatalf("item %d = %v, want error naming %s", i, it, wantField[i])
		}
	}
	if !strings.Contains(res[1].(map[string]any)["error"].(string), "unescaped apostrophe") {
		t.Fatalf("item 1 %v", res[1])
	}
	if last := res[4].(map[string]any); last["total"].(float64) != 0 || len(last["ids"].([]any)) != 0 {
		t.Fatalf("empty result %v", last)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"collection":"nope","programs":[]}`, "collection"},
		{`{"collection":"amazon_toys","programs":[]}`, "programs"},
		{`{"collection":"amazon_toys","programs":[{}],"topk":-1}`, "topk"},
		{`{"collection":"amazon_toys","programs":[{}],"extra":1}`, "extra"},
		{`{"collection":"amazon_toys","programs":[{}]}]]]not json`, ""},
		{`{"collection":"amazon_toys","programs":[{}]}{"collection":"amazon_toys","programs":[{}]}`, ""},
		{`{"Collection":"amazon_toys","programs":[{}]}`, "Collection"},
		{`{`, ""},
	} {
		rec, out := post(tc.body)
		if rec.Code != 400 || out["field"] != tc.field {
			t.Fatalf("%s: status %d body %s, want 400 naming %q", tc.body, rec.Code, rec.Body, tc.field)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/hybrid/execute", nil))
	if rec.Code != 405 {
		t.Fatalf("GET status %d", rec.Code)
	}
}
