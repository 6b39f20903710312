package app

import (
	"net/http"

	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/mcp"
)

// addMCP mounts the MCP server (package server/mcp) at /mcp in pages:
// search and get_document over s.Server (set once server.New returns;
// no request reaches a page before), execute_program over rt.
func (s *Service) addMCP(pages map[string]http.Handler, rt *sdk.Runtime) error {
	h, err := mcp.Handler(mcp.Over(func() *server.Server { return s.Server }, rt))
	if err != nil {
		return err
	}
	pages["/mcp"] = h
	return nil
}
