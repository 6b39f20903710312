package main

import (
	"net/http"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
)

// endpointDeps are the optional models the extra endpoints share: the
// reranker behind rerank() in programs and mutations, and the policy
// tokenizer counting observation tokens. Nil fields mean none.
type endpointDeps struct {
	reranker rlsearch.Reranker
	tokens   rlsearch.TokenCounter
}

// extraEndpoints returns the endpoints served beside /retrieve, /healthz and
// /metrics (program execution, rewards, ...), by path. Each feature adds
// its line here.
func extraEndpoints(ix *index.Index, deps endpointDeps) (map[string]http.Handler, error) {
	m := map[string]http.Handler{}
	exec, err := addHybridEndpoints(m, ix)
	if err != nil {
		return nil, err
	}
	if err := addRewardEndpoints(m, exec); err != nil {
		return nil, err
	}
	if err := addProgramEndpoints(m, ix, deps); err != nil {
		return nil, err
	}
	if err := addMutateEndpoints(m, ix, deps); err != nil {
		return nil, err
	}
	return m, nil
}
