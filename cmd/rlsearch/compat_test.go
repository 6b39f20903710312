package main

import (
	"context"

	"github.com/rlsearch/rlsearch/cmd/internal/cmdflags"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
)

// addHybridEndpoints and addRewardEndpoints mount what serve mounts for
// --collections and the rewards (app.AddHybrid, app.AddRewards with
// serve's environment configuration), for the tests of those endpoints.

func addHybridEndpoints(m map[string]server.Endpoint, ix *index.Index, dir string) (reward.HybridExecutor, error) {
	exec, _, err := app.AddHybrid(context.Background(), m, ix, dir)
	return exec, err
}

func addRewardEndpoints(m map[string]server.Endpoint, exec reward.HybridExecutor) error {
	o := cmdflags.RewardEnv()
	o.ProRetrieval.Executor = exec
	return app.AddRewards(m, o)
}
