package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server"
)

type docs []rlsearch.Document

func (d docs) Len() int { return len(d) }
func (d docs) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || int(row) >= len(d) {
		return rlsearch.Document{}, fmt.Errorf("row %d out of range", row)
	}
	return d[row], nil
}

// oneHit answers every non-blank query with row 1, then row 0.
type oneHit struct{}

func (oneHit) Name() string { return "bm25" }
func (oneHit) Retrieve(_ context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(queries))
	for i := range out {
		out[i] = []rlsearch.Hit{{Row: 1, Score: 2.5}, {Row: 0, Score: 0.5}}[:min(k, 2)]
	}
	return out, nil
}

func ExampleServer_Handler() {
	corpus := docs{
		{ID: "0", Contents: rlsearch.MakeContents("Paris", "Paris is the capital of France.")},
		{ID: "1", Contents: rlsearch.MakeContents("Berlin", "Berlin is the capital of Germany.")},
	}
	srv, err := server.New(server.Config{
		Retrievers: map[string]rlsearch.Retriever{
			"bm25": oneHit{},
			"e5":   server.NewBatcher(oneHit{}, 512, 2*time.Millisecond), // an expensive retriever, batched
		},
		Default: "bm25",
		Docs:    corpus,
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, body := range []string{
		`{"queries": ["capital of germany", " "], "topk": 1, "return_scores": true}`,
		`{"queries": ["capital"], "retriever": "e5"}`,
		`{"queries": ["capital"], "topk": 0}`,
		`{"queries": ["capital"], "topk": -1}`,
	} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/retrieve", strings.NewReader(body)))
		out, _ := io.ReadAll(rec.Body)
		fmt.Println(rec.Code, strings.TrimSpace(string(out)))
	}
	// Output:
	// 200 {"result":[[{"document":{"id":"1","contents":"\"Berlin\"\nBerlin is the capital of Germany."},"score":2.5}],[]]}
	// 200 {"result":[[{"id":"1","contents":"\"Berlin\"\nBerlin is the capital of Germany."},{"id":"0","contents":"\"Paris\"\nParis is the capital of France."}]]}
	// 200 {"result":[[{"id":"1","contents":"\"Berlin\"\nBerlin is the capital of Germany."},{"id":"0","contents":"\"Paris\"\nParis is the capital of France."}]]}
	// 400 {"error":"topk must be between 1 and 1000 (0 or absent means 3), got -1","field":"topk"}
}
