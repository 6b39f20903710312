package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// RunnerFunc is the shape of a peer package's entry point that takes its
// options as strings: Run(ctx, suite, opts, progress) ([]Row, error).
type RunnerFunc func(ctx context.Context, suite string, opts map[string]string, progress io.Writer) ([]Row, error)

// AdaptRunner turns a RunnerFunc into a PeerFunc for RegisterPeer, so that
// wiring such a peer is one line:
//
//	bench.RegisterPeer("faiss", []string{"flat", "hnsw"}, bench.AdaptRunner(peers.Run))
//
// The opts map holds: "data", "work", "root", "reps", "min_time" (Go
// duration), "quick" and "peers" ("true"/"false"), "seed", "threads"
// (comma-separated), "ours" (our rows of the suite as a JSON array of Row:
// their Config and Params say which configurations to run), and every
// --set "suite.key" of this suite under "key".
func AdaptRunner(run RunnerFunc) PeerFunc {
	return func(ctx context.Context, suite string, o PeerOptions) ([]Row, error) {
		ours, err := json.Marshal(o.Ours)
		if err != nil {
			return nil, err
		}
		th := make([]string, len(o.Threads))
		for i, t := range o.Threads {
			th[i] = fmt.Sprint(t)
		}
		m := map[string]string{
			"data": o.Data, "work": o.Work, "root": o.Root, "reps": fmt.Sprint(o.Reps), "min_time": o.MinTime.String(),
			"quick": fmt.Sprint(o.Quick), "seed": fmt.Sprint(o.Seed), "threads": strings.Join(th, ","), "ours": string(ours),
		}
		for k, v := range o.Set {
			if rest, ok := strings.CutPrefix(k, suite+"."); ok {
				m[rest] = v
			}
		}
		log := o.Log
		if log == nil {
			log = io.Discard
		}
		rows, err := run(ctx, suite, m, log)
		for i, r := range rows {
			if verr := r.Validate(); verr != nil {
				return rows[:i], fmt.Errorf("peer row %d: %w", i, verr)
			}
		}
		return rows, err
	}
}
