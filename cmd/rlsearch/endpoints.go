package main

import (
	"context"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/sdk"
)

// endpointDeps are the optional models the extra endpoints share: the
// reranker behind rerank() in programs and mutations, and the policy
// tokenizer counting observation tokens. Nil fields mean none.
type endpointDeps struct {
	reranker rlsearch.Reranker
	tokens   rlsearch.TokenCounter
	budgets  sdk.Budgets // program budgets; zero fields mean the sdk defaults
	// collections is serve's --collections ("" = none).
	collections string
}

// openDeps opens the reranker of rr (none without --reranker) and the
// policy tokenizer at tokenizer (sdk.BoundTokens when ""). The closer
// releases what was opened; on error nothing stays open.
func openDeps(ctx context.Context, rr *rerankFlags, ortLib, tokenizer string) (endpointDeps, *rerank.Reranker, func(), error) {
	var deps endpointDeps
	r, err := rr.open(ctx, ortLib)
	if err != nil {
		return deps, nil, nil, err
	}
	closer := func() {}
	if r != nil {
		deps.reranker = r
		closer = func() { r.Close() }
	}
	if tokenizer != "" {
		bpe, err := rerank.LoadBPE(tokenizer)
		if err != nil {
			closer()
			return deps, nil, nil, err
		}
		deps.tokens = bpe
	}
	return deps, r, closer, nil
}

// runtimeConfig is the program runtime over ix with deps.
func runtimeConfig(ix *index.Index, deps endpointDeps) sdk.Config {
	return sdk.Config{Retrievers: ix.Retrievers(), Docs: ix, Reranker: deps.reranker, Tokens: deps.tokens, Budgets: deps.budgets}
}

// extraEndpoints returns the endpoints served beside /retrieve, /healthz and
// /metrics (program execution, rewards, ...), by path. Each feature adds
// its line here.
func extraEndpoints(ix *index.Index, deps endpointDeps) (map[string]server.Endpoint, error) {
	m := map[string]server.Endpoint{}
	exec, err := addHybridEndpoints(m, ix, deps.collections)
	if err != nil {
		return nil, err
	}
	if err := addRewardEndpoints(m, exec); err != nil {
		return nil, err
	}
	// One program runtime serves both program endpoints, so its bound on
	// concurrently running programs (sdk.Config.MaxConcurrent) holds for
	// the whole server.
	rt, err := sdk.New(runtimeConfig(ix, deps))
	if err != nil {
		return nil, err
	}
	if err := addProgramEndpoints(m, rt); err != nil {
		return nil, err
	}
	if err := addMutateEndpoints(m, rt); err != nil {
		return nil, err
	}
	return m, nil
}
