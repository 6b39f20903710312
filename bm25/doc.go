// Package bm25 is a Pyserini-compatible BM25 retriever over an on-disk
// inverted index, in pure Go (no cgo, CPU only; the file is memory-mapped
// on unix, build constraint "unix", and read into memory elsewhere).
//
// # Analysis
//
// Analyze reproduces Anserini's DefaultEnglishAnalyzer, which Pyserini uses
// for its BM25 indexes: Lucene StandardTokenizer (UAX#29 words, max token
// length 255), EnglishPossessiveFilter, LowerCaseFilter, StopFilter with
// Lucene's 33 English stop words, PorterStemFilter. Documents and queries
// go through the same chain.
//
// # Scoring
//
// Scores follow Lucene 9 BM25Similarity as Pyserini configures it
// (k1 = 0.9, b = 0.4 by default; see Config):
//
//	idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
//	score(t, d) = idf · tf / (tf + k1 · (1 - b + b · dl / avgdl))
//	score(q, d) = Σ over distinct query terms t of count(t in q) · score(t, d)
//
// Lucene ≥ 8 dropped the (k1 + 1) numerator factor, which does not change
// rankings. N is Lucene's docCount, the number of documents with at least
// one term; avgdl = (total terms) / N; dl is the number of terms of the
// document after analysis (stop words removed). The arithmetic mirrors
// Lucene's float32 steps (idf in float64 rounded to float32, weight =
// count · idf, term score = weight - weight / (1 + tf · normInverse)).
//
// Known differences from Pyserini: Lucene stores dl quantised to one byte
// (SmallFloat.intToByte4, exact up to 40 terms and within about 1/8 of it
// beyond), while this package uses exact lengths, so scores can differ in
// the third significant digit and near-ties can swap. Per-document scores
// are summed over terms in float32 (Lucene sums in float64). The rare
// Porter-stemmer and emoji corner cases are listed on Analyze.
//
// # Search
//
// Search is document-at-a-time block-max MaxScore over 128-posting blocks:
// each block carries an exact upper bound of the term's score in it, so
// whole windows of rows that cannot reach the current k-th score are
// skipped without decoding, and candidates are dropped as soon as their
// bound falls below it. The result equals exhaustive scoring exactly: the
// same rows, in the same order, with bit-identical float32 scores (see
// searchMaxScore for the argument; the exhaustive oracle is kept and the
// tests compare both on thousands of queries for k from 1 to 1000).
//
// # Build
//
// Builder.Add analyzes texts on Config.Workers goroutines and applies them
// in row order; postings stay in memory up to Config.MemoryBudget, then
// spill as sorted runs to Config.TempDir, and WriteFile merges the runs
// into the file, streaming. The file's bytes do not depend on the budget or
// the worker count.
//
// # Shards
//
// NewShardBuilder builds a corpus split into contiguous row ranges, one
// file per shard, with the corpus-wide statistics computed once at build
// time (Elasticsearch's DFS phase, done once instead of per query): the
// document count N, the total length (so avgdl) and every term's document
// frequency. A shard scores with those, so its float32 scores are those of
// one index over the corpus, bit for bit (the sum over the query terms
// present in the shard equals the one-index sum, whose other terms add +0),
// and merging the shards' top-k lists by descending score, ties by
// ascending corpus row (Index.Shard().FirstRow + row), gives the one
// index's top k exactly. A shard can be built on its own machine from the
// whole corpus: the rows of the other shards are analyzed for the
// statistics only (ShardPlan.Keep), and its file is byte for byte the one
// an all-shards build writes.
//
// # Use
//
//	b, _ := bm25.NewBuilder(bm25.Config{})
//	defer b.Abort() // removes temporary runs if WriteFile is never reached
//	for _, text := range passages {
//		b.Add(text) // row 0, 1, 2, ...
//	}
//	err := b.WriteFile("wiki.bm25")
//	ix, err := bm25.Open("wiki.bm25")
//	defer ix.Close()
//	hits, err := ix.SearchErr("who directed The Informant!", 10)
//
// An Index is safe for concurrent use (Close excepted); a Builder is not.
//
// # FORMAT
//
// One file, little-endian, no padding. Version 3 (versions 1 and 2 are
// refused with an error asking to rebuild the index: version 1 had one
// whole-file checksum and unblocked postings, version 2 no norm slots).
// Header, 128 bytes:
//
//	offset  size  field
//	0       8     magic "RLSBM25\x00"
//	8       4     version, uint32 = 3
//	12      4     flags, uint32: bit 0 FlagNFC (terms analyzed after NFC;
//	              a file without it, written before NFC analysis, is
//	              refused with ErrAnalyzer asking to rebuild), bit 1
//	              FlagShard (a shard: the fields at 76 to 100 and the
//	              global dfs section follow); other bits are refused as
//	              corrupt
//	16      4     k1, float32 bits
//	20      4     b, float32 bits
//	24      4     numDocs N (rows), uint32 <= 2^31-1
//	28      4     numTerms T, uint32
//	32      4     docCount (rows with at least one term), uint32
//	36      4     block size, uint32 = 128 (postings per block)
//	40      8     sumTF (total terms over all rows), uint64
//	48      8     postLen (bytes of the postings section), uint64
//	56      8     numBlocks B (skip entries), uint64
//	64      8     blobLen (bytes of the term bytes section), uint64
//	72      4     CRC-32C (Castagnoli) of the document lengths section
//	76      48    reserved, zero; with FlagShard the corpus-wide statistics:
//	  76    4       first row: the corpus row of this file's row 0, uint32
//	  80    4       corpus rows, uint32 (first row + N <= it)
//	  84    4       corpus docCount (rows with a term), uint32 >= docCount
//	  88    8       corpus sumTF, uint64 >= sumTF
//	  96    4       CRC-32C of the global dfs section
//	  100   24      reserved, zero
//	124     4     CRC-32C of header bytes [0, 124)
//
// Sections, in this order right after the header:
//
//	4·N       document lengths: N × uint32, terms per row
//	postLen   postings: for each term in term order, its blocks in row
//	          order; a block of n = min(128, postings left) postings is
//	            n bytes   norm slots, one per posting: the slot of the
//	                      row's length (see Norm slots)
//	            n bytes   tf bytes: tf for 1 <= tf <= 254, 255 for a tf
//	                      of 255 or more (escaped)
//	            n gaps    uvarint row gaps, gap = row - previous row - 1,
//	                      the previous row of a block's first posting
//	                      being the last row of the term's previous block
//	                      (-1 for its first block); rows increasing
//	            4·e bytes for each of the e postings whose slot is 255,
//	                      in posting order: its row's length, uint32
//	            4·g bytes for each of the g postings whose tf byte is
//	                      255, in posting order: its tf (>= 255), uint32
//	          The counts e and g are those of the 255 bytes among the
//	          slots and tf bytes; the gaps end exactly where the escaped
//	          lengths begin. Decoding a block reads one varint per posting.
//	12·B      skip entries, one per block, terms in order:
//	            0  uint32   last row of the block
//	            4  float32  maxX: max over the block of float32(tf) · normInv(row),
//	                        rounded to float32 as the scorer rounds it
//	            8  uint32   byte length of the block (a block starts
//	                        where the previous one of its term ends)
//	40·T      term entries, in strictly increasing term byte order:
//	            0  uint64   offset of the term in the term bytes
//	            8  uint64   offset of its first block in the postings
//	           16  uint64   index of its first skip entry
//	           24  uint32   df (>= 1); it has ceil(df/128) blocks
//	           28  float32  maxX over all its blocks
//	           32  uint32   CRC-32C of its postings bytes followed by its skip entries
//	           36  uint16   term length in bytes
//	           38  uint16   reserved, zero
//	blobLen   term bytes: the T terms (UTF-8), concatenated in term order
//	4·⌈T/4096⌉ chunk checksums: for each chunk of 4096 terms, the CRC-32C
//	          of its term entries followed by its term bytes
//	4·T       global dfs (FlagShard only): for each term, in term order,
//	          its document frequency in the whole corpus, uint32
//	          (df <= it <= corpus docCount); checked at Open
//
// A shard scores with the corpus-wide values: idf(t) from the term's
// global df and the corpus docCount, avgdl = corpus sumTF / corpus
// docCount (so normInv and the stored maxX bounds are the corpus's); N,
// docCount and sumTF at offsets 24 to 48 are the shard's own and check its
// document lengths section. An unsharded file is exactly as before
// FlagShard existed.
//
// Norm slots: the 255 most frequent document lengths below 4096 (by
// decreasing number of rows, ties by increasing length) get slots 0 to
// 254 in that order; every other length gets 255. The table is a function
// of the document lengths section alone, so Open derives it in the same
// pass that checks the lengths, and the file does not store it. A posting
// carries its row's slot so that the search reads norms sequentially with
// the postings instead of one random per-row read each (5M generated
// passages: 825 distinct lengths, the top 255 cover 99.3% of the rows and
// about 96% of the terms, rows weighted by their length; 1 byte per
// posting, +40% on this section).
//
// normInv(row) = 1 / (k1 · (1 - b + b · dl / avgdl)) in float32 as in
// Scoring. Because a term's float32 score is non-decreasing in
// float32(tf) · normInv, maxX gives an exact block bound for any query
// weight; the searcher still adds a relative margin when it sums bounds
// (see searchMaxScore).
//
// Open maps the file, checks the header checksum, the size of every
// section, the document lengths (checksum, count and sum against the
// header) and computes the norms: O(N), no pass over postings or terms. A
// dictionary chunk's checksum is verified the first time a lookup reads
// it, a term's the first time a search uses it (atomic bitsets, so once
// per Index); decoding range-checks every value. Check checks everything,
// including order, coverage and the maxX bounds. Every failure wraps
// ErrCorrupt and names the section and offset.
package bm25
