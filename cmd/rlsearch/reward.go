package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/rlsearch/rlsearch/hybrid"
	"github.com/rlsearch/rlsearch/internal/server"
	"github.com/rlsearch/rlsearch/reward"
)

// rewardFlags bind the reward configuration once for "rlsearch reward" and
// for the /v1/rewards endpoints of "serve". Every default comes from an
// environment variable so that serve, which takes no reward flags, is
// configured the same way.
type rewardFlags struct {
	refs, judgeURL, judgeModel, judgeKeyEnv, judgeCache string
	judgeTimeout                                        time.Duration
	judgeRetries, workers                               int
	lambdaFormat, lambdaPath, lambdaOutcome             string
	alpha, decay                                        string
	pathCombine, correct, metric                        string
	lengthBudget                                        int
	collections                                         string
	// executor runs ProRetrieval programs (serve passes the collections it
	// loaded for /v1/hybrid/execute); nil scores pre-executed rollouts only.
	executor reward.HybridExecutor
}

func (f *rewardFlags) bind(fs *flag.FlagSet) {
	env := os.Getenv
	fs.StringVar(&f.refs, "refs", env("RLSEARCH_REWARD_REFS"), "Search-P1 reference-plan cache, JSONL {\"qid\", \"plan\": [str]} (default $RLSEARCH_REWARD_REFS)")
	fs.StringVar(&f.judgeURL, "judge-url", env("RLSEARCH_JUDGE_URL"), "OpenAI-compatible API root for the Search-P1 judge, e.g. http://127.0.0.1:8000/v1 (default $RLSEARCH_JUDGE_URL; empty = lexical judge)")
	fs.StringVar(&f.judgeModel, "judge-model", env("RLSEARCH_JUDGE_MODEL"), "judge model name (default $RLSEARCH_JUDGE_MODEL)")
	fs.StringVar(&f.judgeKeyEnv, "judge-key-env", "RLSEARCH_JUDGE_API_KEY", "environment variable holding the judge API key (empty value = none)")
	fs.StringVar(&f.judgeCache, "judge-cache", env("RLSEARCH_JUDGE_CACHE"), "judgement cache file, saved atomically after every batch (default $RLSEARCH_JUDGE_CACHE; empty = memory only)")
	fs.DurationVar(&f.judgeTimeout, "judge-timeout", 0, "timeout per judge request (0 = 60s)")
	fs.IntVar(&f.judgeRetries, "judge-retries", 0, "judge retries after a failure (0 = 4, -1 = none)")
	fs.IntVar(&f.workers, "workers", 0, "rollouts scored at once (0 = 8)")
	fs.StringVar(&f.collections, "collections", "", "hybrid collections (one directory or a directory of them) that execute ProRetrieval programs not executed beforehand")
	fs.StringVar(&f.lambdaFormat, "lambda-format", "", "Search-P1 λ_f (default 0.1)")
	fs.StringVar(&f.lambdaPath, "lambda-path", "", "Search-P1 λ_p (default 0.3)")
	fs.StringVar(&f.lambdaOutcome, "lambda-outcome", "", "Search-P1 λ_a (default 0.6)")
	fs.StringVar(&f.alpha, "alpha", "", "Search-P1 α between r_acc and r_reason (default 0.5)")
	fs.StringVar(&f.decay, "decay", "", "Search-P1 decay of an incorrect answer's soft outcome (default 0.5; 1 = §3.2.3 alone)")
	fs.StringVar(&f.pathCombine, "path-combine", "", "Search-P1 dual track: max (default), mean, self, ref")
	fs.StringVar(&f.correct, "correct", "", "Search-P1 correctness: contains (default, the paper's ACC) or em")
	fs.StringVar(&f.metric, "metric", "", "ProRetrieval result metric: mrr (default), hit@1, hit@3, ndcg@3")
	fs.IntVar(&f.lengthBudget, "length-budget", 0, "ProRetrieval length budget in tokens (0 = 512)")
}

func optFloat(name, s string) (*float64, error) {
	if s == "" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, usageErr("--%s %q is not a number", name, s)
	}
	return &v, nil
}

// scorer builds the reward Scorer and the judge cache (nil without an LLM
// judge).
func (f *rewardFlags) scorer() (*reward.Scorer, *reward.JudgeCache, error) {
	cfg := reward.Config{Workers: f.workers}
	p1 := &cfg.SearchP1
	for _, o := range []struct {
		name, s string
		dst     **float64
	}{{"lambda-format", f.lambdaFormat, &p1.LambdaFormat}, {"lambda-path", f.lambdaPath, &p1.LambdaPath},
		{"lambda-outcome", f.lambdaOutcome, &p1.LambdaOutcome}, {"alpha", f.alpha, &p1.Alpha}, {"decay", f.decay, &p1.Decay}} {
		v, err := optFloat(o.name, o.s)
		if err != nil {
			return nil, nil, err
		}
		*o.dst = v
	}
	p1.PathCombine, p1.Correct = f.pathCombine, f.correct
	cfg.ProRetrieval.Metric, cfg.ProRetrieval.LengthBudget = f.metric, f.lengthBudget
	if f.collections != "" && f.executor == nil {
		cols, err := hybrid.OpenCollections(context.Background(), f.collections, hybrid.OpenConfig{})
		if err != nil {
			return nil, nil, fmt.Errorf("--collections: %w", err)
		}
		if len(cols) > 0 {
			f.executor = hybrid.NewExecutor(cols)
		}
	}
	if f.executor != nil {
		cfg.ProRetrieval.Executor = f.executor
	}
	if f.refs != "" {
		refs, err := reward.LoadReferences(f.refs)
		if err != nil {
			return nil, nil, err
		}
		p1.References = refs
	}
	var cache *reward.JudgeCache
	if f.judgeURL != "" {
		j, err := reward.NewOpenAIJudge(reward.OpenAIConfig{BaseURL: f.judgeURL, Model: f.judgeModel, APIKey: os.Getenv(f.judgeKeyEnv),
			Timeout: f.judgeTimeout, MaxRetries: f.judgeRetries})
		if err != nil {
			return nil, nil, err
		}
		if cache, err = reward.OpenJudgeCache(f.judgeCache); err != nil {
			return nil, nil, err
		}
		p1.Judge = reward.CachedJudge{Inner: j, Cache: cache}
	}
	s, err := reward.New(cfg)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	return s, cache, nil
}

// addRewardEndpoints mounts POST /v1/rewards/{qa,rpl,search-p1,proretrieval},
// configured from the environment (see rewardFlags).
func addRewardEndpoints(m map[string]server.Endpoint, exec reward.HybridExecutor) error {
	f := rewardFlags{executor: exec}
	fs := flag.NewFlagSet("reward", flag.ContinueOnError)
	f.bind(fs)
	s, cache, err := f.scorer()
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
		// Unknown top-level keys pass (as before); near-misses do not.
		m["/v1/rewards/"+string(k)] = server.JSON(serve, server.EndpointOptions{MaxBodyBytes: reward.DefaultMaxBodyBytes, IgnoreUnknown: true})
	}
	return nil
}

func runReward(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reward", flag.ContinueOnError)
	var (
		f     rewardFlags
		kind  string
		in    string
		batch int
	)
	f.bind(fs)
	fs.StringVar(&kind, "kind", "", "reward: qa, rpl, search-p1 or proretrieval (required)")
	fs.IntVar(&batch, "batch", 256, "rollouts per scoring batch")
	fs.StringVar(&in, "in", "-", "rollouts JSONL file (- = stdin)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q (rollouts are read from stdin)", fs.Args())
	}
	k, err := reward.ParseKind(kind)
	if err != nil {
		return usageErr("--kind: %v", err)
	}
	if batch < 1 {
		return usageErr("--batch %d must be at least 1", batch)
	}
	s, cache, err := f.scorer()
	if err != nil {
		return err
	}
	var r io.Reader = os.Stdin
	if in != "-" {
		fh, err := os.Open(in)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	var after func() error
	if cache != nil {
		after = cache.Save
	}
	return s.ScoreJSONL(ctx, k, batch, r, stdout, after)
}
