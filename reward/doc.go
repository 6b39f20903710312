// Package reward scores search-agent rollouts for RL trainers: QA metrics,
// RPL retrieval verification, the Search-P1 path-centric reward and the
// ProRetrieval hierarchical reward, and retrieval metrics (recall, NDCG,
// hit, MRR at k) as the reward of a query-rewriting policy. Every
// component of a reward is
// returned, not only its total. Pure Go, no build tags, CPU only.
//
// # QA metrics
//
// Normalize is SQuAD's normalize_answer after UnicodeFold; ExactMatch, F1
// and Contains (the "answer contained" accuracy of Search-R1 and Search-P1)
// take the best over a list of gold answers. ExtractAnswer reads the last
// <answer>…</answer> block.
//
// # Differences from Search-R1 (verl/utils/reward_score/qa_em.py)
//
// Search-R1's normalize_answer, em_check, subem_check and extract_solution
// define the behaviour kept here, except, deliberately:
//
//  1. Unicode: NFKC, then Unicode dashes and minus signs become "-" and
//     curly, low-9 and angle quotation marks become "'" or "\"", and soft
//     hyphens and zero-width characters are deleted, before lower-casing
//     (UnicodeFold). So "−5" (U+2212) equals "-5" and "“Paris”" equals
//     "Paris"; Search-R1 compares code points (EM 0 for both). The result is
//     recomposed (NFC) after punctuation removal.
//  2. Golds that normalise to "" ("A", "The The", "!!!"): Search-R1 gives
//     EM 1 to any answer that also normalises to "" and sub-EM 1 to every
//     answer (the empty string is in every string). Here such a gold is
//     matched by its LightTokens (lower-cased, folded, punctuation trimmed
//     from token ends, articles kept): EM when the token lists are equal,
//     contains when they occur as a whole-token run, F1 on those tokens;
//     the result carries gold_empty_after_normalize, and
//     bench.LoadQuestions counts such questions. Blank golds never match.
//  3. extract_solution returns None unless the text holds two or more
//     <answer> blocks, because its input includes the prompt's example
//     block; we are given the response only and take its last block.
//  4. Format: Search-R1's EM reward has no format component. Where our
//     rewards score format, more than one <answer> block earns less than
//     full credit: ProRetrieval's F is MultiAnswerFormat (0.5, which also
//     scales every later layer), Search-P1's answer part is 0.5. QA and
//     RPL score no format.
//
// Kept from Search-R1 by default, changeable: SQuAD's normalisation drops
// the sign of numbers ("-5" matches "5"); NumericSignStrict (the request
// field "numeric_sign": "strict") keeps it (see NumericSign).
//
// Also unlike Python: strings.ToLower maps U+0130 to one rune.
//
// # RPL (papers 000, 002)
//
// ScoreRPL gives V_ret (1 when the printed evidence covers every gold
// support document; per turn and over the rollout), gold coverage, answer
// metrics, and the counts a trainer logs: turns, retrieval calls,
// candidates, printed documents and tokens. Evidence is matched by
// document id; a turn that reports only its observation text is matched by
// gold title (weaker, reported as matched_by "titles"). A turn may be a
// result of POST /v1/programs/execute as it is (its "stats" fill
// retrieval_calls, candidates and printed_tokens); observation tokens
// that no turn reports are counted with rlsearch.BoundTokens, the program
// runtime's default counter, unless RPLConfig.Tokens is set.
//
// QA metrics are implemented in internal/answer, which package sdk also
// uses (D_mut answer spans) without importing reward.
//
// # Search-P1 (paper 001, §3.2 and App. B)
//
//	R_total   = λ_p·R_path + λ_a·R_outcome + λ_f·R_format      λ_f=0.1 λ_p=0.3 λ_a=0.6 (App. B.2)
//	S_self    = r_planner × n_exec/n_plan × min(1, n_exec/n_actions)
//	S_ref     = covered reference steps / reference steps (order-agnostic)
//	R_path    = max(S_self, S_ref)  (PathCombine; S_self alone without a reference)
//	R_outcome = 1 if correct, else decay·(α·r_acc + (1−α)·r_reason)   α=0.5 (chosen), decay=0.5 (App. B.2)
//	R_format  = 0.4·answer + 0.2·reasoning + 0.2·tool calls + 0.2·structure (soft; weights chosen)
//
// "Correct" is answer-contained accuracy (§4.1), r_acc the answer's token
// F1. Plan, step-coverage and reasoning judgements go through a Judge:
// LexicalJudge (deterministic, documented rules) by default, or
// OpenAIJudge, an OpenAI-compatible chat-completions client with timeouts,
// retries with back-off, wrapped in a CachedJudge whose JudgeCache is keyed
// by content hash and saved atomically, so reruns make no request.
// Reference plans P_ref come from an offline JSONL cache keyed by question
// id (ReadReferences); VotePlan elects one from the
// correct trajectories of a question.
//
// Constants the papers leave open are chosen here, documented where they
// are defined, and exposed in the configurations: α, the dual-track
// combination, the format weights, the lexical judge's thresholds, and all
// of ProRetrieval's weights and length budget.
//
// # ProRetrieval (paper 003, §3.3)
//
// Four gated layers: format (a parsable <answer>{"sql", "retrieval_list"}</answer>
// whose placeholders match its entries), execution (the program ran),
// result (MRR by default, or Hit@1, Hit@3, NDCG@3 of the executed ranking
// against the ground-truth set) and length (decay past a token budget):
//
//	Total = 0.1·F + F·(0.2·E + E·(0.6·Q + [Q>0]·0.1·L))
//
// A rollout carries its execution outcome, or a HybridExecutor runs it.
//
// # Retrieval metrics (query rewriting: DeepRetrieval, ConvSearch-R1)
//
// ScoreRetrieval computes recall@k, NDCG@k, hit@k and MRR@k of a ranked
// list against graded relevance with trec_eval's definitions (see
// RetrievalScores for the formulas and the deliberate differences). The
// retrieval reward (KindRetrieval) reads a policy's query from its answer
// (QueriesFromAnswer), searches every rollout of a batch through a
// Searcher with one call per (retriever, k), fuses several queries by RRF
// (k = 60) and rewards the chosen metric.
//
// # Serving
//
// Scorer.ScoreBatch scores a batch of JSON rollouts of one Kind;
// Service.Serve answers POST /v1/rewards/{qa,rpl,search-p1,proretrieval,retrieval}
// as a plain call (server owns the HTTP side; bad rollouts are
// *InputError values naming "rollouts[i].field"); the only net/http in
// this package is OpenAIJudge's outbound client. The CLI is "rlsearch reward --kind K < rollouts.jsonl > rewards.jsonl".
//
// Example:
//
//	s, _ := reward.New(reward.Config{})
//	res, err := s.ScoreBatch(ctx, reward.KindQA, []json.RawMessage{
//		json.RawMessage(`{"id": "q1", "golden_answers": ["2009"], "response": "<answer>In 2009.</answer>"}`)})
//	// res[0].(reward.QAResult): em 0, contains 1, f1 0.67
//
// Concurrency: every exported function is safe for concurrent use; types
// say so in their docs.
package reward
