package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server/app"
)

// rewardFlags bind the reward configuration once for "rlsearch reward" and
// for the /v1/rewards endpoints of "serve" (rewardEnv). Every default comes
// from an environment variable so that serve, which takes no reward flags,
// is configured the same way.
type rewardFlags struct {
	o                        reward.Options
	judgeKeyEnv, collections string
}

func (f *rewardFlags) bind(fs *flag.FlagSet) {
	env, p1 := os.Getenv, &f.o.SearchP1
	fs.StringVar(&f.o.References, "refs", env("RLSEARCH_REWARD_REFS"), "Search-P1 reference-plan cache, JSONL {\"qid\", \"plan\": [str]} (default $RLSEARCH_REWARD_REFS)")
	fs.StringVar(&f.o.Judge.BaseURL, "judge-url", env("RLSEARCH_JUDGE_URL"), "OpenAI-compatible API root for the Search-P1 judge, e.g. http://127.0.0.1:8000/v1 (default $RLSEARCH_JUDGE_URL; empty = lexical judge)")
	fs.StringVar(&f.o.Judge.Model, "judge-model", env("RLSEARCH_JUDGE_MODEL"), "judge model name (default $RLSEARCH_JUDGE_MODEL)")
	fs.StringVar(&f.judgeKeyEnv, "judge-key-env", "RLSEARCH_JUDGE_API_KEY", "environment variable holding the judge API key (empty value = none)")
	fs.StringVar(&f.o.JudgeCache, "judge-cache", env("RLSEARCH_JUDGE_CACHE"), "judgement cache file, saved atomically after every batch (default $RLSEARCH_JUDGE_CACHE; empty = memory only)")
	fs.DurationVar(&f.o.Judge.Timeout, "judge-timeout", 0, "timeout per judge request (0 = 60s)")
	fs.IntVar(&f.o.Judge.MaxRetries, "judge-retries", 0, "judge retries after a failure (0 = 4, -1 = none)")
	fs.IntVar(&f.o.Workers, "workers", 0, "rollouts scored at once (0 = 8)")
	f.o.NumericSign = reward.NumericSign(env("RLSEARCH_REWARD_NUMERIC_SIGN"))
	fs.Func("numeric-sign", `answer metrics: "squad" (default, Search-R1: "-5" matches "5") or "strict" (numbers keep sign and value); default $RLSEARCH_REWARD_NUMERIC_SIGN; a request's "numeric_sign" overrides it`, func(v string) error {
		n, err := reward.ParseNumericSign(v)
		f.o.NumericSign = n
		return err
	})
	fs.StringVar(&f.collections, "collections", "", "hybrid collections (one directory or a directory of them) that execute ProRetrieval programs not executed beforehand")
	optFloat := func(name string, dst **float64, usage string) { // absent: *dst stays nil, the package default
		fs.Func(name, usage, func(v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("--%s %q is not a number", name, v)
			}
			*dst = &x
			return nil
		})
	}
	optFloat("lambda-format", &p1.LambdaFormat, "Search-P1 λ_f (default 0.1)")
	optFloat("lambda-path", &p1.LambdaPath, "Search-P1 λ_p (default 0.3)")
	optFloat("lambda-outcome", &p1.LambdaOutcome, "Search-P1 λ_a (default 0.6)")
	optFloat("alpha", &p1.Alpha, "Search-P1 α between r_acc and r_reason (default 0.5)")
	optFloat("decay", &p1.Decay, "Search-P1 decay of an incorrect answer's soft outcome (default 0.5; 1 = §3.2.3 alone)")
	fs.StringVar(&p1.PathCombine, "path-combine", "", "Search-P1 dual track: max (default), mean, self, ref")
	fs.StringVar(&p1.Correct, "correct", "", "Search-P1 correctness: contains (default, the paper's ACC) or em")
	fs.StringVar(&f.o.ProRetrieval.Metric, "metric", "", "ProRetrieval result metric: mrr (default), hit@1, hit@3, ndcg@3")
	fs.IntVar(&f.o.ProRetrieval.LengthBudget, "length-budget", 0, "ProRetrieval length budget in tokens (0 = 512)")
}

// options are the reward.Options the flags name, with the judge key read
// from its environment variable.
func (f *rewardFlags) options() reward.Options {
	o := f.o
	o.Judge.APIKey = os.Getenv(f.judgeKeyEnv)
	return o
}

// rewardEnv is serve's reward configuration: the flags' defaults, from the
// environment.
func rewardEnv() reward.Options {
	var f rewardFlags
	f.bind(flag.NewFlagSet("reward", flag.ContinueOnError))
	return f.options()
}

func rewardCmd(fs *flag.FlagSet) runFunc {
	var f rewardFlags
	f.bind(fs)
	var idx indexFlags
	idx.bind(fs)
	kind := fs.String("kind", "", "reward: qa, rpl, search-p1, proretrieval or retrieval (required)")
	batch := fs.Int("batch", 256, "rollouts per scoring batch")
	in := fs.String("in", "-", "rollouts JSONL file (- = stdin)")
	return func(ctx context.Context, _ []string, stdout, stderr io.Writer) error {
		k, err := reward.ParseKind(*kind)
		if err != nil {
			return usageErr("--kind: %v", err)
		}
		if *batch < 1 {
			return usageErr("--batch %d must be at least 1", *batch)
		}
		o := f.options()
		_, exec, done, err := app.OpenCollections(ctx, f.collections, nil) // none without --collections
		if err != nil {
			return err
		}
		defer done()
		o.ProRetrieval.Executor = exec
		if idx.cfg.Dir != "" { // the retrieval reward's searches
			ix, closeIx, err := idx.open(ctx)
			if err != nil {
				return err
			}
			defer closeIx()
			o.Retrieval.Searcher = app.NewSearcher(ix.Retrievers(), ix, ix.DefaultRetriever())
		}
		s, cache, err := reward.Open(o)
		if err != nil {
			return err
		}
		var after func() error
		if cache != nil {
			after = cache.Save
		}
		return jsonl.Pipe(*in, "", stdout, func(r io.Reader, _ string, w io.Writer) error { return s.ScoreJSONL(ctx, k, *batch, r, w, after) })
	}
}
