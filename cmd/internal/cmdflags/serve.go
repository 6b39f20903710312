package cmdflags

import (
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/rlsearch/rlsearch/rerank"
	"github.com/rlsearch/rlsearch/reward"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/cache"
)

// Serve configures the server (app.Config): `rlsearch serve` and the
// in-process server of `rlsearch-bench index`.
type Serve struct {
	Idx           Index
	Cfg           app.Config // Index, Logger, Reward and Budgets.MaxMemoryBytes are set by AppConfig
	Addr          string
	Listen        []string // --listen ADDR[=PROFILE][@CORPUS]
	ProgramMemMiB int64
	CacheSave     string // --cache-save
}

// Bind binds the server's flags, the index's (repeatable --index) and the
// reranker's.
func (s *Serve) Bind(fs *flag.FlagSet) {
	c := &s.Cfg
	s.Idx.BindCorpora(fs)
	fs.Var((*Multi)(&s.Listen), "listen", "another listener, ADDR[=PROFILE][@CORPUS] (repeatable): PROFILE searchr1 (default), browsecomp (/retrieve {\"query\"} answered in BrowseComp-Plus's flat shape) or asearcher (documents carry \"url\"); CORPUS one of --index's names; with --listen, --addr is served only when given explicitly")
	fs.IntVar(&c.Server.BrowseCompK, "browsecomp-k", server.DefaultBrowseCompK, "hits per /retrieve request on a browsecomp listener (BrowseComp-Plus's server --k)")
	fs.IntVar(&c.Server.MaxPageBytes, "max-page-bytes", server.DefaultMaxPageBytes, "largest page of POST /access in bytes (whole passages, then a marker line)")
	fs.BoolVar(&c.PagesAtStart, "pages-at-start", false, "build the page index (documents by id for MCP get_document, pages for /access: 16 bytes per passage) at start instead of on first use")
	fs.StringVar(&c.Collections, "collections", "", "hybrid collections for POST /v1/hybrid/execute: one collection directory or a directory of them (see 'rlsearch hybrid build')")
	fs.BoolVar(&s.Idx.CheckDocs, "check-docs", false, "check every docstore block's CRC at startup (one read of docs.zst: 9 s for 21M passages); without it each block's CRC is checked when the block is first read, and `rlsearch check` checks every file")
	DeprecatedBool(fs, &s.Idx.CheckDocs, "verify-docs", "check-docs")
	fs.StringVar(&c.PolicyTokenizer, "policy-tokenizer", "", "tokenizer.json of the policy (Qwen3 byte-level BPE) for the programs' 2,048-token observation cap; empty = sdk.BoundTokens (byte classes, never below 1/4 of Qwen3)")
	fs.Uint64Var(&c.Budgets.MaxSteps, "program-max-steps", 0, "Starlark step budget of each program, builtin work included (0 = 1,000,000)")
	fs.Int64Var(&s.ProgramMemMiB, "program-max-memory", 0, "memory budget of each program in MiB: bytes its operations are charged before they run (0 = 64)")
	fs.StringVar(&s.Addr, "addr", "127.0.0.1:8000", "listen address (Search-R1's retrieval server uses port 8000)")
	fs.StringVar(&c.Retriever, "retriever", "", `default retriever when a request names none: "bm25" or "e5" (default e5 when --model is set, else bm25)`)
	fs.IntVar(&c.Server.MaxTopK, "max-topk", server.DefaultMaxTopK, "largest accepted topk")
	fs.IntVar(&c.Server.MaxResults, "max-results", server.DefaultMaxResults, "most hits per request, queries x topk (413 above it)")
	fs.IntVar(&c.Server.MaxQueries, "max-queries", server.DefaultMaxQueries, "most queries per request (Search-R1 sends every active rollout's query in one request)")
	fs.IntVar(&c.Server.ChunkQueries, "chunk-queries", server.DefaultChunkQueries, "most queries of one /retrieve request searched per retriever call; larger requests are searched chunk after chunk before the response streams")
	fs.Int64Var(&c.Server.MaxBodyBytes, "max-body", server.DefaultMaxBodyBytes, "largest request body in bytes")
	Off(fs, &c.Server.MaxInFlight, "max-inflight", 0, "most requests handled at once (admission control; 0 = the default, 4 per core, at least 16; off or -1 = unbounded); more wait up to 1 s, then 503 with Retry-After")
	fs.DurationVar(&c.Server.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "longest a response may take from its request's headers to its last byte")
	Off(fs, &c.CacheBytes, "cache-bytes", cache.DefaultMaxBytes, "result cache shared by /retrieve, programs, mutate and rewards, in bytes (LRU; keyed by index build, retriever, topk and the analysed BM25 query or exact dense query); 0 = the default (256 MiB); off or -1 = no cache")
	fs.StringVar(&c.CacheLoad, "cache-load", "", "result cache file to load at start (written by --cache-save; refused when saved under another fingerprint: index build, encoder, dense backend and parameters, reranker); a missing file is a cold start; one --index only")
	fs.StringVar(&s.CacheSave, "cache-save", "", "write the result cache to this file (atomically, zstd, checksummed) when the server shuts down, for --cache-load on a restart or on another replica of the same build; one --index only")
	fs.IntVar(&c.BatchMax, "batch-max", 64, "most queries the e5 batching queue merges into one encoder call")
	fs.DurationVar(&c.BatchWait, "batch-wait", 2*time.Millisecond, "how long the e5 batching queue waits to fill a batch")
	fs.Var((*Multi)(&c.UI.Dumps), "inspect", "rollout dump (JSONL: verl, Search-R1, chat messages, rlsearch trajectories) shown by the inspector at /ui/; repeatable; loaded in the background")
	fs.StringVar(&c.UI.Gold, "inspect-gold", "", "questions JSONL joined to inspected rollouts without gold (by id, question, or question text in the prompt)")
	Rerank(fs, &c.Reranker)
}

// ProgramMemBytes is --program-max-memory in bytes, or a usage error when
// it is out of range.
func (s *Serve) ProgramMemBytes() (int64, error) {
	if s.ProgramMemMiB < 0 || s.ProgramMemMiB > 1<<20 {
		return 0, usageErr("--program-max-memory %d MiB is out of range (0 to 1048576)", s.ProgramMemMiB)
	}
	return s.ProgramMemMiB << 20, nil
}

// AppConfig is the server configuration the flags name, with logger and
// the rewards configured from the environment (RewardEnv).
func (s *Serve) AppConfig(logger *slog.Logger) (app.Config, error) {
	cfg := s.Cfg
	mem, err := s.ProgramMemBytes()
	if err != nil {
		return cfg, err
	}
	cfg.Index, cfg.Logger, cfg.Reward = s.Idx.Config(), logger, RewardEnv()
	cfg.Budgets.MaxMemoryBytes = mem
	return cfg, nil
}

// Rerank binds the reranker behind POST /rerank, rerank() in programs
// and the rerank command: the model and the endpoint's limits. The model's
// ORTLib comes from the caller.
func Rerank(fs *flag.FlagSet, r *app.RerankConfig) {
	c, s := &r.Model, &r.Service
	fs.StringVar(&c.Dir, "reranker", os.Getenv("RERANKER"), "reranker model directory (Qwen3-Reranker or cross-encoder ONNX export with rlsearch.json); default $RERANKER; empty = no /rerank")
	fs.IntVar(&c.Sessions, "rerank-sessions", 0, "ONNX Runtime sessions for the reranker (0 = GOMAXPROCS/2, 1..4)")
	fs.IntVar(&c.MaxBatchTokens, "rerank-batch-tokens", 0, "most tokens per reranker run, batch size × longest pair (0 = 8192); a longer pair runs alone")
	fs.IntVar(&c.MaxLength, "rerank-max-length", 0, "token budget per (query, document) pair (0 = model config, else 8192 for Qwen3, 512 for cross-encoders)")
	fs.IntVar(&c.BatchSize, "rerank-batch", 0, "pairs per reranker run; concurrent requests share batches (0 = 16)")
	fs.DurationVar(&c.BatchWait, "rerank-wait", 0, "how long a reranker batch waits to fill (0 = 2ms)")
	fs.StringVar(&c.Instruction, "rerank-instruction", "", "Qwen3-Reranker instruction (default: the model card's web search instruction)")
	fs.StringVar(&c.Provider, "rerank-device", "cpu", "where the reranker runs: cpu (ONNX Runtime), gpu or gpu:N (our fp16 Qwen3 forward pass; an error when that GPU cannot run it), auto (GPU 0 when usable and its model canary passes, else cpu; never cuda), cuda or cuda:N (ONNX Runtime's CUDA execution provider, Qwen3 or cross-encoder: needs `make gpu-setup`'s .cache/ort-gpu/libonnxruntime.so.1 as --ort-lib and the CUDA 13 libraries; an error naming what is missing, never the CPU); /healthz says where and why")
	fs.Var(SkipFlag{&c.SkipCanary}, "rerank-canary", "before the reranker serves on a GPU (--rerank-device gpu, auto, cuda), score fixed query/document pairs on it and on the CPU and require |Δ score| <= 2e-3 (relative above 1) per pair (auto falls back to the CPU on a mismatch, gpu/cuda refuse to start); --rerank-canary=false skips it")
	fs.BoolVar(&r.Check, "rerank-check", true, "at startup require the reranker to score a relevant passage above irrelevant ones (turn off for random-weight test models)")
	fs.IntVar(&s.MaxQueries, "rerank-max-queries", rerank.DefaultMaxRerankQueries, "most queries per /rerank request")
	fs.IntVar(&s.MaxDocs, "rerank-max-docs", rerank.DefaultMaxRerankDocs, "most candidate documents per /rerank request, all queries together (each is one model pass)")
	fs.Int64Var(&r.MaxBodyBytes, "rerank-max-body", rerank.DefaultMaxRerankBody, "largest /rerank request body in bytes")
	fs.IntVar(&s.DefaultTopK, "rerank-topk", rerank.DefaultRerankTopK, "documents kept per query when a /rerank request omits rerank_topk or sends 0 (Search-R1's default: 3)")
}

// Reward binds the reward configuration once for "rlsearch reward" and
// "inspect", and for the /v1/rewards endpoints of "serve" (RewardEnv).
// Every default comes from an environment variable so that serve, which
// takes no reward flags, is configured the same way.
type Reward struct {
	O                        reward.Options
	JudgeKeyEnv, Collections string
}

// Bind binds the reward flags.
func (f *Reward) Bind(fs *flag.FlagSet) {
	env, p1 := os.Getenv, &f.O.SearchP1
	fs.StringVar(&f.O.References, "refs", env("RLSEARCH_REWARD_REFS"), "Search-P1 reference-plan cache, JSONL {\"qid\", \"plan\": [str]} (default $RLSEARCH_REWARD_REFS)")
	fs.StringVar(&f.O.Judge.BaseURL, "judge-url", env("RLSEARCH_JUDGE_URL"), "OpenAI-compatible API root for the Search-P1 judge, e.g. http://127.0.0.1:8000/v1 (default $RLSEARCH_JUDGE_URL; empty = lexical judge)")
	fs.StringVar(&f.O.Judge.Model, "judge-model", env("RLSEARCH_JUDGE_MODEL"), "judge model name (default $RLSEARCH_JUDGE_MODEL)")
	fs.StringVar(&f.JudgeKeyEnv, "judge-key-env", "RLSEARCH_JUDGE_API_KEY", "environment variable holding the judge API key (empty value = none)")
	fs.StringVar(&f.O.JudgeCache, "judge-cache", env("RLSEARCH_JUDGE_CACHE"), "judgement cache file, saved atomically after every batch (default $RLSEARCH_JUDGE_CACHE; empty = memory only)")
	fs.DurationVar(&f.O.Judge.Timeout, "judge-timeout", 0, "timeout per judge request (0 = 60s)")
	Off(fs, &f.O.Judge.MaxRetries, "judge-retries", 0, "judge retries after a failure (0 = the default, 4; off or -1 = none)")
	fs.IntVar(&f.O.Workers, "workers", 0, "rollouts scored at once (0 = 8)")
	f.O.NumericSign = reward.NumericSign(env("RLSEARCH_REWARD_NUMERIC_SIGN"))
	fs.Func("numeric-sign", `answer metrics: "squad" (default, Search-R1: "-5" matches "5") or "strict" (numbers keep sign and value); default $RLSEARCH_REWARD_NUMERIC_SIGN; a request's "numeric_sign" overrides it`, func(v string) error {
		n, err := reward.ParseNumericSign(v)
		f.O.NumericSign = n
		return err
	})
	fs.StringVar(&f.Collections, "collections", "", "hybrid collections (one directory or a directory of them) that execute ProRetrieval programs not executed beforehand")
	// The Search-P1 numbers default to 0, the package's default (the
	// options convention): "off" or a negative number asks for a literal 0.
	Off(fs, &p1.LambdaFormat, "lambda-format", 0, "Search-P1 λ_f (0 = the default, 0.1; off = a zero weight)")
	Off(fs, &p1.LambdaPath, "lambda-path", 0, "Search-P1 λ_p (0 = the default, 0.3; off = a zero weight)")
	Off(fs, &p1.LambdaOutcome, "lambda-outcome", 0, "Search-P1 λ_a (0 = the default, 0.6; off = a zero weight)")
	Off(fs, &p1.Alpha, "alpha", 0, "Search-P1 α between r_acc and r_reason (0 = the default, 0.5; off = α 0, r_reason alone)")
	Off(fs, &p1.Decay, "decay", 0, "Search-P1 decay of an incorrect answer's soft outcome (0 = the default, 0.5; 1 = §3.2.3 alone; off = 0, no credit)")
	fs.StringVar(&p1.PathCombine, "path-combine", "", "Search-P1 dual track: max (default), mean, self, ref")
	fs.StringVar(&p1.Correct, "correct", "", "Search-P1 correctness: contains (default, the paper's ACC) or em")
	fs.StringVar(&f.O.ProRetrieval.Metric, "metric", "", "ProRetrieval result metric: mrr (default), hit@1, hit@3, ndcg@3")
	fs.IntVar(&f.O.ProRetrieval.LengthBudget, "length-budget", 0, "ProRetrieval length budget in tokens (0 = 512)")
}

// Options are the reward.Options the flags name, with the judge key read
// from its environment variable.
func (f *Reward) Options() reward.Options {
	o := f.O
	o.Judge.APIKey = os.Getenv(f.JudgeKeyEnv)
	return o
}

// RewardEnv is serve's reward configuration: the flags' defaults, from the
// environment.
func RewardEnv() reward.Options {
	var f Reward
	f.Bind(flag.NewFlagSet("reward", flag.ContinueOnError))
	return f.Options()
}
