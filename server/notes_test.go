package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// docRetriever answers every query with rows 1 and 0 and documents of its
// own (not the server's Docs), and reports what its query asks for:
// "partial X" marks the answer partial, "down" marks the request
// unavailable, "fail" returns an error.
type docRetriever struct{}

func (docRetriever) Name() string { return "remote" }

func (d docRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	h, _, err := d.RetrieveDocs(ctx, queries, k)
	return h, err
}

func (docRetriever) RetrieveDocs(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, [][]rlsearch.Document, error) {
	hits := make([][]rlsearch.Hit, len(queries))
	docs := make([][]rlsearch.Document, len(queries))
	for i, q := range queries {
		switch {
		case strings.HasPrefix(q, "partial "):
			MarkPartial(ctx, strings.TrimSpace(strings.TrimPrefix(q, "partial ")))
		case q == "down":
			MarkUnavailable(ctx, fmt.Errorf("shard 3 of 4 has no live replica: %w", rlsearch.ErrOverloaded))
		case q == "fail":
			return nil, nil, fmt.Errorf("shard 1 failed: %w", rlsearch.ErrOverloaded)
		}
		for r := range min(k, 2) {
			row := int32(1 - r)
			hits[i] = append(hits[i], rlsearch.Hit{Row: row, Score: float32(2 - r)})
			docs[i] = append(docs[i], rlsearch.Document{ID: fmt.Sprintf("remote-%d", row), Contents: q})
		}
	}
	return hits, docs, nil
}

// TestDocRetrieverAndNotes: a DocRetriever's documents are written instead
// of Config.Docs'; MarkPartial flags the answer (header, and "partial" in
// /retrieve); MarkUnavailable turns an endpoint's 200 into a 503 with
// Retry-After naming the cause.
func TestDocRetrieverAndNotes(t *testing.T) {
	echo := func(ctx context.Context, req struct {
		Query string `json:"query"`
	}) (map[string]int, error) {
		// An endpoint that swallows retrieval failures, as the program
		// runtime does (error observations in a 200).
		docRetriever{}.RetrieveDocs(ctx, []string{req.Query}, 1)
		return map[string]int{"ok": 1}, nil
	}
	s, _ := newTestServer(t, func(c *Config) {
		c.Retrievers["remote"] = docRetriever{}
		c.Extra = map[string]Endpoint{"/v1/echo": JSON(echo, EndpointOptions{})}
	})
	h := s.Handler()
	for _, c := range []struct {
		name, path, body string
		status           int
		partial          string
		body1            string // in the body
	}{
		{"documents of the retriever", "/retrieve", `{"queries": ["abc"], "topk": 2, "retriever": "remote"}`, 200, "",
			`{"result":[[{"id":"remote-1","contents":"abc"},{"id":"remote-0","contents":"abc"}]]}`},
		{"partial", "/retrieve", `{"queries": ["partial shard 2 of 4", "partial shard 0 of 4", "partial shard 2 of 4 "], "topk": 1, "retriever": "remote", "return_scores": true}`, 200, "shard 0 of 4, shard 2 of 4",
			`,"partial":["shard 0 of 4","shard 2 of 4"]}`},
		{"unavailable", "/retrieve", `{"queries": ["down"], "retriever": "remote"}`, 503, "", "shard 3 of 4 has no live replica"},
		{"error", "/retrieve", `{"queries": ["fail"], "retriever": "remote"}`, 503, "", "shard 1 failed"},
		{"endpoint partial", "/v1/echo", `{"query": "partial shard 1 of 2"}`, 200, "shard 1 of 2", `{"ok":1}`},
		{"endpoint unavailable", "/v1/echo", `{"query": "down"}`, 503, "", "shard 3 of 4 has no live replica"},
		{"plain", "/v1/echo", `{"query": "x"}`, 200, "", `{"ok":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, hdr, body := do(t, h, http.MethodPost, c.path, c.body)
			if status != c.status || hdr.Get(PartialHeader) != c.partial || !strings.Contains(body, c.body1) {
				t.Errorf("got %d %s=%q %s\nwant %d %q with %s", status, PartialHeader, hdr.Get(PartialHeader), body, c.status, c.partial, c.body1)
			}
			if status == 503 && hdr.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After")
			}
		})
	}
	// Outside a request the reports do nothing.
	MarkPartial(context.Background(), "x")
	MarkUnavailable(context.Background(), errors.New("x"))
}
