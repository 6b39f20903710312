package router

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/server"
)

// Paths of the shard endpoints a router calls (mounted by ShardService).
const (
	PathShardRetrieve = "/v1/shard/retrieve"
	PathShardDocs     = "/v1/shard/docs"
)

// Identity is which shard of which build a shard server serves, as its
// GET /healthz reports it under "shard" (index.Index.Health).
type Identity struct {
	Index        int    `json:"index"`      // 0-based
	Count        int    `json:"count"`      // shards of the build
	FirstRow     int    `json:"first_row"`  // corpus row of the shard's row 0
	Rows         int    `json:"rows"`       // rows the shard holds
	TotalRows    int    `json:"total_rows"` // rows of the corpus
	BuildID      string `json:"build_id"`
	CorpusSHA256 string `json:"corpus_sha256"`
}

// RetrieveRequest is the body of POST /v1/shard/retrieve.
type RetrieveRequest struct {
	Queries   []string `json:"queries"`
	TopK      int      `json:"topk"`
	Retriever string   `json:"retriever"`
}

// Hit is one shard hit: its corpus row, its float32 score (encoding/json
// writes the shortest decimal that reads back to the same float32, so the
// router merges the exact scores) and its document.
type Hit struct {
	Row      int64   `json:"row"`
	Score    float32 `json:"score"`
	ID       string  `json:"id"`
	Contents string  `json:"contents"`
}

// RetrieveResponse answers RetrieveRequest: the shard's top k per query,
// sorted by descending score, ties by ascending row.
type RetrieveResponse struct {
	BuildID string  `json:"build_id"`
	Shard   int     `json:"shard"`
	Results [][]Hit `json:"results"`
}

// DocsRequest is the body of POST /v1/shard/docs: corpus rows of the
// shard.
type DocsRequest struct {
	Rows []int64 `json:"rows"`
}

// DocsResponse answers DocsRequest, one document per row.
type DocsResponse struct {
	BuildID string              `json:"build_id"`
	Shard   int                 `json:"shard"`
	Docs    []rlsearch.Document `json:"docs"`
}

// ShardConfig configures a ShardService.
type ShardConfig struct {
	// Retrievers by API name, answering with the shard's own rows.
	Retrievers map[string]rlsearch.Retriever
	// Docs maps the shard's rows to documents.
	Docs server.DocSource
	// Shard is the shard's identity (Index, Count, FirstRow, Rows,
	// TotalRows and BuildID required).
	Shard Identity
	// MaxQueries, MaxTopK and MaxResults bound a request as the server's
	// /retrieve limits do; 0 means server's defaults.
	MaxQueries, MaxTopK, MaxResults int
}

// ShardService answers a router's requests on a shard server: the shard's
// top k with corpus rows and documents, and documents by corpus row. Safe
// for concurrent use.
type ShardService struct {
	cfg ShardConfig
}

// NewShardService checks cfg and returns the service. Errors name the
// bad field.
func NewShardService(cfg ShardConfig) (*ShardService, error) {
	id := cfg.Shard
	switch {
	case len(cfg.Retrievers) == 0:
		return nil, errors.New("router: ShardConfig.Retrievers is empty")
	case cfg.Docs == nil:
		return nil, errors.New("router: ShardConfig.Docs is nil")
	case id.BuildID == "" || id.Count < 1 || id.Index < 0 || id.Index >= id.Count || id.FirstRow < 0 || id.Rows != cfg.Docs.Len() || id.FirstRow+id.Rows > id.TotalRows:
		return nil, fmt.Errorf("router: ShardConfig.Shard %+v does not describe %d rows of a build", id, cfg.Docs.Len())
	}
	if cfg.MaxQueries == 0 {
		cfg.MaxQueries = server.DefaultMaxQueries
	}
	if cfg.MaxTopK == 0 {
		cfg.MaxTopK = server.DefaultMaxTopK
	}
	if cfg.MaxResults == 0 {
		cfg.MaxResults = server.DefaultMaxResults
	}
	return &ShardService{cfg: cfg}, nil
}

// Endpoints returns the shard endpoints by path, to mount in
// server.Config.Extra.
func (s *ShardService) Endpoints() map[string]server.Endpoint {
	return map[string]server.Endpoint{
		PathShardRetrieve: server.JSON(s.Retrieve, server.EndpointOptions{}),
		PathShardDocs:     server.JSON(s.Docs, server.EndpointOptions{}),
	}
}

// Retrieve answers RetrieveRequest with the shard's top k of every query
// (server's /retrieve limits; errors wrap rlsearch.ErrBadInput and name
// the field).
func (s *ShardService) Retrieve(ctx context.Context, req RetrieveRequest) (RetrieveResponse, error) {
	c := s.cfg
	r, ok := c.Retrievers[req.Retriever]
	switch {
	case !ok:
		names := make([]string, 0, len(c.Retrievers))
		for n := range c.Retrievers {
			names = append(names, n)
		}
		slices.Sort(names)
		return RetrieveResponse{}, rlsearch.BadField("retriever", "shard %d serves no retriever %q (have %v)", c.Shard.Index, req.Retriever, names)
	case req.TopK < 1 || req.TopK > c.MaxTopK:
		return RetrieveResponse{}, rlsearch.BadField("topk", "topk must be between 1 and %d, got %d", c.MaxTopK, req.TopK)
	case len(req.Queries) > c.MaxQueries:
		return RetrieveResponse{}, rlsearch.TooLarge("queries", "too many queries: %d > %d per request", len(req.Queries), c.MaxQueries)
	case len(req.Queries)*req.TopK > c.MaxResults:
		return RetrieveResponse{}, rlsearch.TooLarge("topk", "too many results: %d queries x topk %d > %d", len(req.Queries), req.TopK, c.MaxResults)
	}
	lists, err := r.Retrieve(ctx, req.Queries, req.TopK)
	if err != nil {
		return RetrieveResponse{}, err
	}
	if len(lists) != len(req.Queries) {
		return RetrieveResponse{}, fmt.Errorf("router: retriever %s returned %d lists for %d queries", req.Retriever, len(lists), len(req.Queries))
	}
	out := RetrieveResponse{BuildID: c.Shard.BuildID, Shard: c.Shard.Index, Results: make([][]Hit, len(lists))}
	for i, l := range lists {
		hits := make([]Hit, 0, len(l))
		for _, h := range l {
			if h.Row < 0 {
				continue // padding
			}
			d, err := c.Docs.Doc(h.Row)
			if err != nil {
				return RetrieveResponse{}, fmt.Errorf("router: shard %d row %d: %w", c.Shard.Index, h.Row, err)
			}
			hits = append(hits, Hit{Row: int64(c.Shard.FirstRow) + int64(h.Row), Score: h.Score, ID: d.ID, Contents: d.Contents})
		}
		out.Results[i] = hits
	}
	return out, nil
}

// Docs answers DocsRequest; a row outside the shard is a 400 naming it.
func (s *ShardService) Docs(ctx context.Context, req DocsRequest) (DocsResponse, error) {
	c := s.cfg
	if len(req.Rows) > c.MaxResults {
		return DocsResponse{}, rlsearch.TooLarge("rows", "too many rows: %d > %d per request", len(req.Rows), c.MaxResults)
	}
	out := DocsResponse{BuildID: c.Shard.BuildID, Shard: c.Shard.Index, Docs: make([]rlsearch.Document, len(req.Rows))}
	for i, row := range req.Rows {
		local := row - int64(c.Shard.FirstRow)
		if local < 0 || local >= int64(c.Shard.Rows) {
			return DocsResponse{}, rlsearch.BadField(fmt.Sprintf("rows[%d]", i), "row %d is not in shard %d (rows %d to %d)", row, c.Shard.Index, c.Shard.FirstRow, c.Shard.FirstRow+c.Shard.Rows-1)
		}
		d, err := c.Docs.Doc(int32(local))
		if err != nil {
			return DocsResponse{}, err
		}
		out.Docs[i] = d
	}
	return out, nil
}
