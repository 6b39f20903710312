// Package mcp serves the retrieval backend as a Model Context Protocol
// server over streamable HTTP (github.com/modelcontextprotocol/go-sdk), so
// that an agent framework or an eval harness that speaks MCP points at
// http://HOST:PORT/mcp without glue. `rlsearch serve` mounts it at /mcp
// of every corpus (/c/NAME/mcp).
//
// Tools, as BrowseComp-Plus's harness calls them (texttron/BrowseComp-Plus
// @ 97c637c searcher/tools.py register_tools; its clients read the search
// output as a JSON list of {"docid", ...}, search_agent/utils.py
// extract_retrieved_docids_from_result):
//
//	search(query, k?)          → [{"docid", "score", "snippet"}]   k defaults to Config.K (BrowseComp-Plus --k 5)
//	get_document(docid)        → {"docid", "text", "title", "url"}   text: the passage as stored ("Title"\ntext)
//	execute_program(code, question?) → the program's observation (text) and its sdk.Result (structured)
//
// search's hits are /retrieve's for the same query and k (server.Search:
// the same retriever, cache and cleaning); snippet is the passage's
// stored contents. get_document's document is the passage with that id
// (server.DocByID; the page index is built on first use). Bad arguments
// (k out of range, an unknown docid) are tool errors (isError, with the
// reason as text), never protocol errors. A POST body that is not one
// JSON value (a message or a batch) in UTF-8, at most jsonbody.MaxDepth
// deep, is a 400 with the house error body before the SDK reads it. The
// handler is safe for concurrent use; sessions idle for SessionTimeout are
// closed.
//
// No cgo; the same on CPU and GPU hosts.
package mcp
