package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
)

// Defaults of Config.
const (
	// DefaultK is BrowseComp-Plus's --k (searcher/mcp_server.py, 5).
	DefaultK = 5
	// DefaultMaxK bounds search's k.
	DefaultMaxK = 100
	// DefaultSessionTimeout closes sessions idle this long.
	DefaultSessionTimeout = 30 * time.Minute
)

// Config configures Handler. Search and Document are required.
type Config struct {
	// Search is /retrieve's retrieval for one query (server.Server.Search
	// with the default retriever).
	Search func(ctx context.Context, query string, k int) ([]server.SearchHit, error)
	// Document returns the passage with an id and its URL
	// (server.Server.DocByID); an unknown id wraps rlsearch.ErrBadInput.
	Document func(ctx context.Context, id string) (server.DocPage, error)
	// Run executes one retrieval program (sdk.Runtime.Serve of a
	// one-program batch); nil leaves execute_program out.
	Run func(ctx context.Context, req sdk.Request) (sdk.Result, error)
	// K is search's default k; 0 means DefaultK. MaxK bounds it; 0 means
	// DefaultMaxK.
	K, MaxK int
	// SessionTimeout closes idle sessions; 0 means DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Name and Version identify the server to clients ("rlsearch", "dev").
	Name, Version string
	// Logger receives the SDK's logs (nil: none).
	Logger *slog.Logger
}

// Over is the Config of an MCP server over a corpus's server and program
// runtime: search is srv().Search with the default retriever, get_document
// srv().DocByID, execute_program rt.Serve of a one-program batch (left out
// when rt is nil). srv is called per request, so the server may be built
// after the handler (server.Config.Pages holds the handler).
func Over(srv func() *server.Server, rt *sdk.Runtime) Config {
	c := Config{
		Search: func(ctx context.Context, q string, k int) ([]server.SearchHit, error) {
			res, err := srv().Search(ctx, "", []string{q}, k)
			if err != nil {
				return nil, err
			}
			return res[0], nil
		},
		Document: func(ctx context.Context, id string) (server.DocPage, error) { return srv().DocByID(ctx, id) },
	}
	if rt != nil {
		c.Run = func(ctx context.Context, req sdk.Request) (sdk.Result, error) {
			resp, err := rt.Serve(ctx, sdk.BatchRequest{Request: req})
			if err != nil {
				return sdk.Result{}, err
			}
			return resp.Results[0], nil
		}
	}
	return c
}

// SearchArgs are search's arguments.
type SearchArgs struct {
	Query string `json:"query" jsonschema:"the search query"`
	K     int    `json:"k,omitempty" jsonschema:"number of hits (default: the server's k)"`
}

// SearchHit is one hit of search, BrowseComp-Plus's {"docid", "score",
// "snippet"}.
type SearchHit struct {
	DocID   string  `json:"docid"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
}

// DocumentArgs are get_document's arguments.
type DocumentArgs struct {
	DocID string `json:"docid" jsonschema:"the docid of a search hit"`
}

// Document is get_document's result, BrowseComp-Plus's {"docid", "text"}
// plus the title and URL.
type Document struct {
	DocID string `json:"docid"`
	Text  string `json:"text"`
	Title string `json:"title"`
	URL   string `json:"url,omitempty"`
}

// ProgramArgs are execute_program's arguments.
type ProgramArgs struct {
	Code     string `json:"code" jsonschema:"the retrieval program (Python with the SDK's dense, sparse, fuse, dedup, rerank; only what it prints returns)"`
	Question string `json:"question,omitempty" jsonschema:"visible to the program as the global question"`
}

// Handler returns the MCP server's streamable HTTP handler. Errors name
// a missing Config field.
func Handler(cfg Config) (http.Handler, error) {
	switch {
	case cfg.Search == nil:
		return nil, errors.New("mcp: Config.Search is nil")
	case cfg.Document == nil:
		return nil, errors.New("mcp: Config.Document is nil")
	case cfg.K < 0 || cfg.MaxK < 0:
		return nil, fmt.Errorf("mcp: Config.K %d and MaxK %d must not be negative", cfg.K, cfg.MaxK)
	}
	if cfg.K == 0 {
		cfg.K = DefaultK
	}
	if cfg.MaxK == 0 {
		cfg.MaxK = max(DefaultMaxK, cfg.K)
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.Name == "" {
		cfg.Name = "rlsearch"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: cfg.Name, Version: cfg.Version}, &sdkmcp.ServerOptions{Logger: cfg.Logger,
		Instructions: "Search a corpus with search(query, k), read a hit's passage with get_document(docid)."})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "search",
		Description: fmt.Sprintf("Perform a search on a knowledge source. Returns top-k hits (default %d) with docid, score, and snippet. The snippet contains the document's contents.", cfg.K)},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in SearchArgs) (*sdkmcp.CallToolResult, []SearchHit, error) {
			k := in.K
			if k == 0 {
				k = cfg.K
			}
			if k < 1 || k > cfg.MaxK {
				return nil, nil, fmt.Errorf("k must be between 1 and %d, got %d", cfg.MaxK, k)
			}
			hits, err := cfg.Search(ctx, in.Query, k)
			if err != nil {
				return nil, nil, err
			}
			out := make([]SearchHit, len(hits))
			for i, h := range hits {
				out[i] = SearchHit{DocID: h.Doc.ID, Score: float64(h.Score), Snippet: h.Doc.Contents}
			}
			return nil, out, nil
		})
	sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "get_document", Description: "Retrieve a full document by its docid."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in DocumentArgs) (*sdkmcp.CallToolResult, Document, error) {
			dp, err := cfg.Document(ctx, in.DocID)
			if err != nil {
				return nil, Document{}, err
			}
			return nil, Document{DocID: dp.Doc.ID, Text: dp.Doc.Contents, Title: dp.Doc.Title(), URL: dp.URL}, nil
		})
	if cfg.Run != nil {
		sdkmcp.AddTool(srv, &sdkmcp.Tool{Name: "execute_program",
			Description: "Run a retrieval program (Python with dense, sparse, fuse, dedup and rerank as builtins) in the sandbox; returns what it printed (at most 2,048 tokens) and its statistics."},
			// Out is any: sdk.Stats marshals a deprecated "calls" beside its
			// fields, which a schema inferred from the type would refuse.
			func(ctx context.Context, _ *sdkmcp.CallToolRequest, in ProgramArgs) (*sdkmcp.CallToolResult, any, error) {
				res, err := cfg.Run(ctx, sdk.Request{Code: in.Code, Question: in.Question})
				if err != nil {
					return nil, nil, err
				}
				text := res.Observation
				if text == "" {
					text = "(the program printed nothing; code " + string(res.Code) + ")"
				}
				return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: text}}}, res, nil
			})
	}
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv },
		&sdkmcp.StreamableHTTPOptions{SessionTimeout: cfg.SessionTimeout, Logger: cfg.Logger})
	return strict(h, sdkmcp.DefaultMaxRequestBodyBytes), nil
}
