package app

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
	"github.com/rlsearch/rlsearch/server"
)

// Each Add function mounts one endpoint family into m (path → endpoint,
// server.Config.Extra), each a domain package's Serve wrapped by
// server.JSON with that package's body limit.

// OpenCollections opens the hybrid collections under dir ("" = none;
// hybrid.OpenCollections), with enc (may be nil) embedding the queries of
// e5 text fields. It returns them, an executor over them for the
// ProRetrieval reward (a nil interface when there are none) and their
// closer.
func OpenCollections(ctx context.Context, dir string, enc rlsearch.Encoder) (map[string]*hybrid.Collection, reward.HybridExecutor, func(), error) {
	cols, err := hybrid.OpenCollections(ctx, dir, hybrid.OpenConfig{Encoder: enc})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("--collections: %w", err)
	}
	closer := func() {
		for _, c := range cols {
			c.Close()
		}
	}
	if len(cols) == 0 {
		return cols, nil, closer, nil
	}
	return cols, hybrid.NewExecutor(cols), closer, nil
}

// AddHybrid mounts POST /v1/hybrid/execute over the collections under dir
// (OpenCollections, with ix's encoder; ix may be nil). It returns the
// executor over the collections and their closer.
func AddHybrid(ctx context.Context, m map[string]server.Endpoint, ix *index.Index, dir string) (reward.HybridExecutor, func(), error) {
	var enc rlsearch.Encoder
	if ix != nil {
		enc = ix.Encoder()
	}
	cols, exec, closer, err := OpenCollections(ctx, dir, enc)
	if err != nil {
		return nil, nil, err
	}
	m["/v1/hybrid/execute"] = server.JSON(hybrid.NewService(cols, hybrid.ServiceConfig{}).Serve, server.EndpointOptions{MaxBodyBytes: hybrid.DefaultMaxBodyBytes})
	return exec, closer, nil
}

// AddRewards mounts POST
// /v1/rewards/{qa,rpl,search-p1,proretrieval,retrieval} with the scorer of
// o (reward.Open; the retrieval reward searches with
// o.Retrieval.Searcher, see NewSearcher); the judge cache, if any, is
// saved after every batch. Unknown top-level keys pass; near-misses do
// not.
func AddRewards(m map[string]server.Endpoint, o reward.Options) error {
	s, cache, err := reward.Open(o)
	if err != nil {
		return err
	}
	sc := reward.ServiceConfig{Scorer: s}
	if cache != nil {
		sc.AfterBatch = cache.Save
	}
	svc, err := reward.NewService(sc)
	if err != nil {
		return err
	}
	for _, k := range reward.Kinds {
		serve := func(ctx context.Context, req reward.Request) (reward.Response, error) { return svc.Serve(ctx, k, req) }
		m["/v1/rewards/"+string(k)] = server.JSON(serve, server.EndpointOptions{MaxBodyBytes: reward.DefaultMaxBodyBytes, IgnoreUnknown: true})
	}
	return nil
}

// AddPrograms mounts POST /v1/programs/execute and POST
// /v1/programs/mutate (package sdk) over rt; mutations use the default
// verifier configuration (64 executions, all gold), with the rerank
// ladder only when rt has a reranker.
func AddPrograms(m map[string]server.Endpoint, rt *sdk.Runtime) error {
	m["/v1/programs/execute"] = server.JSON(rt.Serve, server.EndpointOptions{MaxBodyBytes: rt.MaxBodyBytes()})
	v, err := sdk.NewVerifier(rt, sdk.MutateConfig{})
	if err != nil {
		return err
	}
	m["/v1/programs/mutate"] = server.JSON(v.Serve, server.EndpointOptions{MaxBodyBytes: sdk.DefaultMaxBodyBytes})
	return nil
}

// AddRerank mounts POST /rerank over r with cfg's limits. Search-R1's
// clients send extra keys: unknown keys pass, near-misses do not.
func AddRerank(m map[string]server.Endpoint, r *rerank.Reranker, cfg RerankConfig) error {
	svc, err := rerank.NewService(r, cfg.Service)
	if err != nil {
		return err
	}
	m["/rerank"] = server.JSON(svc.Serve, server.EndpointOptions{MaxBodyBytes: cfg.MaxBodyBytes, IgnoreUnknown: true})
	return nil
}
