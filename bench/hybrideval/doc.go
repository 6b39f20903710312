// Package hybrideval is the ProRetrieval benchmark behind
// `rlsearch-bench hybrid-eval`: it executes the gold programs of generated
// instances (`rlsearch-bench hybrid-gen`), or a model's predicted programs, on a
// collection and scores them (hybrid.Score: Hit@1, Hit@3, MRR, NDCG@3,
// execution success), overall, per level and per modality
// (hybrid.Evaluate).
//
// No cgo. Run is safe for concurrent use if the collection is.
package hybrideval
