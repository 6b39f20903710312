package app

import (
	"context"
	"fmt"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/sdk"
)

// Each Add function mounts one endpoint family into m (path → endpoint,
// server.Config.Extra), each a domain package's Serve wrapped by
// server.JSON with that package's body limit.

// AddHybrid mounts POST /v1/hybrid/execute over the collections under dir
// ("" = none; hybrid.OpenCollections). Collections whose text fields use
// e5 embed queries with ix's encoder (ix may be nil: no encoder). It
// returns an executor over the collections for the ProRetrieval reward
// (nil when none were loaded) and the closer of the collections.
func AddHybrid(m map[string]server.Endpoint, ix *index.Index, dir string) (reward.HybridExecutor, func(), error) {
	var enc rlsearch.Encoder
	if ix != nil && ix.Encoder() != nil {
		enc = ix.Encoder()
	}
	cols, err := hybrid.OpenCollections(context.Background(), dir, hybrid.OpenConfig{Encoder: enc})
	if err != nil {
		return nil, nil, fmt.Errorf("--collections: %w", err)
	}
	closer := func() {
		for _, c := range cols {
			c.Close()
		}
	}
	m["/v1/hybrid/execute"] = server.JSON(hybrid.NewService(cols, hybrid.ServiceConfig{}).Serve, server.EndpointOptions{MaxBodyBytes: hybrid.DefaultMaxBodyBytes})
	if len(cols) == 0 {
		return nil, closer, nil
	}
	return hybrid.NewExecutor(cols), closer, nil
}

// AddRewards mounts POST /v1/rewards/{qa,rpl,search-p1,proretrieval} with
// the scorer of o (reward.Open); the judge cache, if any, is saved after
// every batch. Unknown top-level keys pass; near-misses do not.
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
