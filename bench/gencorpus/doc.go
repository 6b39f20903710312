// Package gencorpus generates Wikipedia-shaped corpora of any size from a
// small real seed corpus, deterministically from a seed, and measures the
// term statistics that matter to BM25 (lengths, within-document repetition,
// document frequencies, topical co-occurrence) so that a generated corpus
// can be compared with the real one.
//
// It exists to measure BM25 (with dynamic pruning), index build and serving
// at wiki-18 scale (21,015,324 passages of about 100 words, ~14 GB of JSONL)
// without shipping wiki-18 itself.
//
// The output is Search-R1 corpus JSONL, one {"id", "contents"} object a line
// with contents `"Title"\ntext`. The real seed passages come first, unchanged
// and with their ids, so that question sets over the seed keep their gold
// passages; generated passages follow with ids "g<row>" (row is the 0-based
// line number in the output).
//
// Models (Config.Model):
//
//   - "topical" (default): each generated passage picks one seed passage
//     uniformly (its topic) and takes that passage's length in words; every
//     word is, with probability TopicProb, a uniformly drawn word occurrence
//     of the topic passage (so the passage's own within-passage frequencies),
//     otherwise a draw from the global unigram distribution of the seed text.
//     Words repeat inside a document and cluster by topic, as in real text.
//     The title is as many words as the topic's title, each drawn from the
//     topic's title words or its capitalised text words. Rare words become
//     variants (below).
//   - "unigram": the pessimistic model: every word is drawn independently
//     from the global unigram distribution, the length from the length of a
//     uniformly drawn seed passage, the title from the global title-word
//     distribution.
//
// Words are the whitespace-separated surface words of the seed text
// (punctuation attached, as in the real corpus), so every analyzer (ours,
// Lucene's) sees real English surface forms. Word order is random. In the
// topical model, words that occur once in the seed are written as suffixed
// variants ("Bengtssonq,") whose number grows like the square root of the
// corpus size (Config.NoRareVariants), so the vocabulary keeps growing
// (Heaps' law, beta = 0.5) and rare words keep small dfs; without them the
// vocabulary stops at the seed's and every term's df grows linearly.
//
// Generation runs on Config.Workers goroutines over chunks of ChunkRows rows,
// each chunk with its own random stream seeded by (RandSeed, chunk index), so
// the bytes written do not depend on the number of workers. No cgo.
//
// Example:
//
//	cfg := gencorpus.Config{Seed: "corpus.jsonl", N: 1_000_000, RandSeed: 1}
//	st, err := gencorpus.WriteFile(ctx, cfg, "wiki1m.jsonl.zst", os.Stderr)
package gencorpus
