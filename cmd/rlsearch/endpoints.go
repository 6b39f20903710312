package main

import (
	"net/http"

	"github.com/rlsearch/rlsearch/index"
)

// extraEndpoints returns the endpoints served beside /retrieve, /healthz and
// /metrics (program execution, rewards, ...), by path. Each feature adds
// its line here.
func extraEndpoints(ix *index.Index) (map[string]http.Handler, error) {
	m := map[string]http.Handler{}
	exec, err := addHybridEndpoints(m, ix)
	if err != nil {
		return nil, err
	}
	if err := addRewardEndpoints(m, exec); err != nil {
		return nil, err
	}
	if err := addProgramEndpoints(m, ix); err != nil {
		return nil, err
	}
	if err := addMutateEndpoints(m, ix); err != nil {
		return nil, err
	}
	return m, nil
}
