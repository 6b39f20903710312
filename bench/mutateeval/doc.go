// Package mutateeval is the RPL mutation experiment behind
// `rlsearch-bench mutate-eval`: for every question of a question set, the
// single-query width-3 BM25 program of the question text is searched for a
// verified mutation (sdk.Verifier.Search), and the outcomes are summarised
// per dataset and overall: fraction verified, the fraction verified among
// questions whose original fails V_ret, executions and searches per
// question, and histograms of the first verified mutation's distance and
// width.
//
// No cgo. Run is safe for concurrent use if the Verifier is.
package mutateeval
