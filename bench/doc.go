// Package bench measures retrieval quality and speed on real data: recall@k
// and MRR of gold passages for question sets such as
// ../shared/data/wiki_multihop/questions.jsonl, and the throughput numbers
// the `rlsearch bench` command reports.
//
// Recall@k "any gold" is the fraction of questions with at least one gold
// passage in the top k; "all gold" the fraction with every gold passage in
// the top k (the multi-hop standard, since a 2-hop question needs both).
// MRR@k is the mean reciprocal rank of the first gold passage within the
// top k (0 when none is there).
//
// No cgo. Functions here are safe for concurrent use unless noted.
package bench
