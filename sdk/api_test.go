package sdk

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

func TestHandler(t *testing.T) {
	rt := newRT(t, wikiIndex(t), Config{MaxBodyBytes: 1 << 20})
	h := server.EndpointHandler(server.JSON(rt.Serve, server.EndpointOptions{MaxBodyBytes: rt.MaxBodyBytes()}))
	for _, tc := range []struct {
		name, method, body string
		status             int
		want               string
	}{
		{"batch", "POST", `{"programs": [{"id": "a", "code": "print(sparse(question, k=2))", "question": "Robin Hood 2018 film"}, {"id": "b", "code": "1/0"}]}`, 200, `"printed_ids":["wiki-000001"`},
		{"inline", "POST", `{"code": "print('hi')"}`, 200, `"observation":"hi\n"`},
		{"response", "POST", `{"programs": [{"response": "I will search.<code>print(1 + 1)</code>"}]}`, 200, `"observation":"2\n"`},
		{"no coalescing", "POST", `{"programs": [{"code": "print(2)"}], "coalesce": false, "memo": false}`, 200, `"code":"ok"`},
		{"budgets", "POST", `{"programs": [{"code": "sparse('x', k=20)", "budgets": {"max_width": 5}}]}`, 200, `"code":"budget_exceeded"`},
		{"bad json", "POST", `{"programs": [`, 400, `"field":""`},
		{"unknown field", "POST", `{"programz": []}`, 400, `unknown field`},
		{"empty", "POST", `{}`, 400, `"field":"programs"`},
		{"no code", "POST", `{"programs": [{"id": "x"}]}`, 400, `"field":"programs[0].code"`},
		{"code and response", "POST", `{"programs": [{"code": "print(1)"}, {"code": "print(1)", "response": "<code>print(2)</code>"}]}`, 400, `"field":"programs[1].response"`},
		{"inline code and response", "POST", `{"code": "print(1)", "response": "<code>print(2)</code>"}`, 400, `both code and response`},
		{"negative budget", "POST", `{"programs": [{"code": "1", "budgets": {"max_calls": -1}}]}`, 400, `"field":"programs[0].budgets"`},
		{"both", "POST", `{"code": "1", "programs": [{"code": "2"}]}`, 400, `"field":"programs"`},
		{"trailing data", "POST", `{"code": "1"} {}`, 400, `after the top-level object`},
		{"trailing brackets", "POST", `{"code": "1"}]]]not json`, 400, `after the top-level object`},
		{"get", "GET", ``, 405, `use POST`},
		{"too many programs", "POST", `{"programs": [` + strings.Repeat(`{"code":"1"},`, DefaultMaxBatchPrograms) + `{"code":"1"}]}`, 413, `at most 4096`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(tc.method, "/v1/programs/execute", strings.NewReader(tc.body)))
			if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
				t.Fatalf("got %d %.300s, want %d containing %s", w.Code, w.Body.String(), tc.status, tc.want)
			}
			if w.Code == 200 {
				var br BatchResponse
				if err := json.Unmarshal(w.Body.Bytes(), &br); err != nil || len(br.Results) == 0 {
					t.Fatalf("response %s: %v", w.Body.String(), err)
				}
			}
		})
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/v1/programs/execute", strings.NewReader(`{"code": "`+strings.Repeat("x", 1<<20)+`"}`)))
	if w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body: %d %s", w.Code, w.Body.String())
	}
}

func TestExtractCode(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"<code>print(1)</code>", "print(1)\n", true},
		{"a <code>x = 1</code> b <code>\nprint(2)\n</code> c", "print(2)\n", true},
		{"<code>```python\nprint(3)\n```</code>", "print(3)\n", true},
		{"<code>```\nprint(4)```</code>", "print(4)\n", true},
		{"no code", "", false},
		{"<code>unterminated", "", false},
		{"</code><code>", "", false},
	} {
		got, ok := ExtractCode(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ExtractCode(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFormatDoc(t *testing.T) {
	d := Doc{ID: "wiki-1", Contents: "\"T\"\nbody", Score: 0.5, Routes: []string{"dense", "sparse"}}
	if got := FormatDoc("[{index}] {id} {title}|{text}|{score}|{routes}\n", 3, d); got != "[3] wiki-1 T|body|0.5000|dense,sparse\n" {
		t.Fatalf("got %q", got)
	}
	if got := FormatObservation("", []Doc{d, d}); got != "Doc 1(Title: \"T\") body\nDoc 2(Title: \"T\") body\n" {
		t.Fatalf("got %q", got)
	}
	rt := newRT(t, wikiIndex(t), Config{DocFormat: "<{index}|{id}>\n", ErrorFormat: "ERR {code}\n"})
	res := run(t, rt, "print(sparse(\"Robin Hood 2018 film\", k=2))\n1/0")
	if !strings.HasPrefix(res.Observation, "<1|wiki-000001>\n<2|") || !strings.HasSuffix(res.Observation, "ERR runtime_error\n") {
		t.Fatalf("got %q", res.Observation)
	}
}
