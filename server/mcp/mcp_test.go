package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/mcp"
)

// corpus is a small corpus with shared words, so that queries tie.
type corpus []rlsearch.Document

func (c corpus) Len() int { return len(c) }
func (c corpus) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || int(row) >= len(c) {
		return rlsearch.Document{}, fmt.Errorf("row %d out of range", row)
	}
	return c[row], nil
}

var docs = corpus{
	{ID: "p1", Contents: rlsearch.MakeContents("Paris", "Paris is the capital of France.")},
	{ID: "p2", Contents: rlsearch.MakeContents("France", "France is a country in Europe with Paris as its capital.")},
	{ID: "t1", Contents: rlsearch.MakeContents("Tokyo", "Tokyo is the capital of Japan.")},
	{ID: "b1", Contents: rlsearch.MakeContents("Berlin", "Berlin is the capital of Germany.")},
	{ID: "q1", Contents: rlsearch.MakeContents(`The "Quote"`, "back\\slash\ttab <b>&</b> café ☕")},
}

// overlap scores a passage by the query words it contains, ties by row.
type overlap struct{}

func (overlap) Name() string { return "bm25" }
func (overlap) Retrieve(_ context.Context, qs []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(qs))
	for i, q := range qs {
		var hits []rlsearch.Hit
		for row, d := range docs {
			n := 0
			for _, w := range strings.Fields(strings.ToLower(q)) {
				if strings.Contains(strings.ToLower(d.Contents), w) {
					n++
				}
			}
			if n > 0 {
				hits = append(hits, rlsearch.Hit{Row: int32(row), Score: float32(n) / 3})
			}
		}
		slices.SortFunc(hits, rlsearch.CompareHits)
		out[i] = hits[:min(k, len(hits))]
	}
	return out, nil
}

// serve builds the HTTP server with /mcp mounted as `rlsearch serve` does.
func serve(t *testing.T) (*httptest.Server, *server.Server) {
	t.Helper()
	rs := map[string]rlsearch.Retriever{"bm25": overlap{}}
	rt, err := sdk.New(sdk.Config{Retrievers: rs, Docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	var srv *server.Server
	h, err := mcp.Handler(mcp.Over(func() *server.Server { return srv }, rt))
	if err != nil {
		t.Fatal(err)
	}
	srv, err = server.New(server.Config{Retrievers: rs, Docs: docs, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(),
		Pages: map[string]http.Handler{"/mcp": h},
		Extra: map[string]server.Endpoint{"/v1/programs/execute": server.JSON(rt.Serve, server.EndpointOptions{})}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, srv
}

func connect(t *testing.T, url string) *sdkmcp.ClientSession {
	t.Helper()
	c := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &sdkmcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *sdkmcp.ClientSession, name string, args map[string]any) *sdkmcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

func text(t *testing.T, res *sdkmcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%d content items", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdkmcp.TextContent)
	if !ok {
		t.Fatalf("content %T, want text", res.Content[0])
	}
	return tc.Text
}

// TestSearchAndGetDocumentEqualRetrieve drives the MCP server with the
// SDK's own client: search's hits (docid, score, snippet) are /retrieve's
// hits for the same query and k, and get_document gives each hit's stored
// passage; the text content parses as BrowseComp-Plus's harness parses
// it (a JSON list of objects with "docid").
func TestSearchAndGetDocumentEqualRetrieve(t *testing.T) {
	ts, _ := serve(t)
	cs := connect(t, ts.URL)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "execute_program,get_document,search" {
		t.Errorf("tools %v", names)
	}
	for _, tc := range []struct {
		query string
		k     int
	}{{"capital paris", 3}, {"capital", 5}, {"café quote", 1}, {"nothing here", 2}, {"capital", 0}} {
		args := map[string]any{"query": tc.query}
		k := tc.k
		if k > 0 {
			args["k"] = k
		} else {
			k = mcp.DefaultK
		}
		res := call(t, cs, "search", args)
		if res.IsError {
			t.Fatalf("search %v: %s", args, text(t, res))
		}
		var hits []mcp.SearchHit
		if err := json.Unmarshal([]byte(text(t, res)), &hits); err != nil {
			t.Fatalf("search text %q is not a JSON list: %v", text(t, res), err)
		}
		body := fmt.Sprintf(`{"queries": [%q], "topk": %d, "return_scores": true}`, tc.query, k)
		resp, err := http.Post(ts.URL+"/retrieve", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var want struct {
			Result [][]struct {
				Document rlsearch.Document `json:"document"`
				Score    float64           `json:"score"`
			} `json:"result"`
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(want.Result[0]) {
			t.Fatalf("%v: %d hits, /retrieve has %d", args, len(hits), len(want.Result[0]))
		}
		for i, w := range want.Result[0] {
			if g := hits[i]; g.DocID != w.Document.ID || g.Score != w.Score || g.Snippet != w.Document.Contents {
				t.Errorf("%v hit %d: %+v, /retrieve %+v", args, i, g, w)
			}
			d := call(t, cs, "get_document", map[string]any{"docid": w.Document.ID})
			var got mcp.Document
			if err := json.Unmarshal([]byte(text(t, d)), &got); err != nil || d.IsError {
				t.Fatalf("get_document %s: %s (%v)", w.Document.ID, text(t, d), err)
			}
			if got.DocID != w.Document.ID || got.Text != w.Document.Contents || got.URL != server.WikipediaURL(w.Document.Title()) {
				t.Errorf("get_document %s = %+v, /retrieve has %+v", w.Document.ID, got, w.Document)
			}
		}
	}
	// Bad arguments are tool errors the model can read, not protocol errors.
	for _, tc := range []struct {
		name string
		args map[string]any
		msg  string
	}{
		{"get_document", map[string]any{"docid": "nope"}, "no document"},
		{"search", map[string]any{"query": "x", "k": 1000}, "between 1 and"},
	} {
		if res := call(t, cs, tc.name, tc.args); !res.IsError || !strings.Contains(text(t, res), tc.msg) {
			t.Errorf("%s(%v): error %v %q, want a tool error with %q", tc.name, tc.args, res.IsError, text(t, res), tc.msg)
		}
	}
}

// TestExecuteProgram: execute_program answers what /v1/programs/execute
// answers for the same program: the observation as text, the result as
// structured content.
func TestExecuteProgram(t *testing.T) {
	ts, _ := serve(t)
	cs := connect(t, ts.URL)
	code := "print(sparse(question, k=2))"
	res := call(t, cs, "execute_program", map[string]any{"code": code, "question": "capital paris"})
	resp, err := http.Post(ts.URL+"/v1/programs/execute", "application/json", strings.NewReader(fmt.Sprintf(`{"code": %q, "question": "capital paris"}`, code)))
	if err != nil {
		t.Fatal(err)
	}
	var want sdk.BatchResponse
	json.NewDecoder(resp.Body).Decode(&want)
	resp.Body.Close()
	if res.IsError || text(t, res) != want.Results[0].Observation || want.Results[0].Observation == "" {
		t.Errorf("observation %q, /v1/programs/execute %q", text(t, res), want.Results[0].Observation)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var got sdk.Result
	if err := json.Unmarshal(b, &got); err != nil || !slices.Equal(got.PrintedIDs, want.Results[0].PrintedIDs) {
		t.Errorf("structured %s, want printed_ids %v", b, want.Results[0].PrintedIDs)
	}
	bad := call(t, cs, "execute_program", map[string]any{"code": "import os\nprint(os.listdir('/'))"})
	resp, err = http.Post(ts.URL+"/v1/programs/execute", "application/json", strings.NewReader(`{"code": "import os\nprint(os.listdir('/'))"}`))
	if err != nil {
		t.Fatal(err)
	}
	want = sdk.BatchResponse{}
	json.NewDecoder(resp.Body).Decode(&want)
	resp.Body.Close()
	if bad.IsError || text(t, bad) != want.Results[0].Observation || want.Results[0].Code == sdk.CodeOK {
		t.Errorf("a refused program is its error observation for the model, as on /v1/programs/execute: %v %q, want %+v", bad.IsError, text(t, bad), want.Results[0])
	}
}

func TestHandlerConfig(t *testing.T) {
	if _, err := mcp.Handler(mcp.Config{}); err == nil || !strings.Contains(err.Error(), "Search") {
		t.Errorf("empty config: %v", err)
	}
	_, err := mcp.Handler(mcp.Config{Search: func(context.Context, string, int) ([]server.SearchHit, error) { return nil, nil },
		Document: func(context.Context, string) (server.DocPage, error) { return server.DocPage{}, errors.New("x") }, K: -1})
	if err == nil {
		t.Error("negative K accepted")
	}
}
