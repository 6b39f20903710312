package app

import (
	"context"
	"net/http"

	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/mcp"
)

// addMCP mounts the MCP server (package server/mcp) at /mcp in pages:
// search and get_document over s.Server (set once server.New returns;
// no request reaches a page before), execute_program over rt.
func (s *Service) addMCP(pages map[string]http.Handler, rt *sdk.Runtime) error {
	h, err := mcp.Handler(mcp.Config{
		Search: func(ctx context.Context, q string, k int) ([]server.SearchHit, error) {
			res, err := s.Server.Search(ctx, "", []string{q}, k)
			if err != nil {
				return nil, err
			}
			return res[0], nil
		},
		Document: func(ctx context.Context, id string) (server.DocPage, error) { return s.Server.DocByID(ctx, id) },
		Run: func(ctx context.Context, req sdk.Request) (sdk.Result, error) {
			resp, err := rt.Serve(ctx, sdk.BatchRequest{Request: req})
			if err != nil {
				return sdk.Result{}, err
			}
			return resp.Results[0], nil
		},
	})
	if err != nil {
		return err
	}
	pages["/mcp"] = h
	return nil
}
