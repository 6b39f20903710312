// Package bm25 is a Pyserini-compatible BM25 retriever over an on-disk
// inverted index, in pure Go (no cgo, no build tags, CPU only).
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
// # Use
//
//	b, _ := bm25.NewBuilder(bm25.Config{})
//	for _, text := range passages {
//		b.Add(text) // row 0, 1, 2, ...
//	}
//	err := b.WriteFile("wiki.bm25")
//	ix, err := bm25.Open("wiki.bm25")
//	hits := ix.Search("who directed The Informant!", 10)
//
// An Index is immutable and safe for concurrent use; a Builder is not.
//
// # FORMAT
//
// One file, little-endian, no padding. Version 1:
//
//	offset  size  field
//	0       8     magic "RLSBM25\x00"
//	8       4     version, uint32 = 1
//	12      4     flags, uint32 = 0
//	16      4     k1, float32 bits
//	20      4     b, float32 bits
//	24      4     numDocs N (rows), uint32 <= 2^31-1
//	28      4     numTerms T, uint32
//	32      4     docCount (rows with at least one term), uint32
//	36      4     reserved, uint32 = 0
//	40      8     sumTF (total terms over all rows), uint64
//	48      8     postLen (bytes of the postings section), uint64
//	56      8     blobLen (bytes of the term section), uint64
//	64      4·N        document lengths: N × uint32, terms per row
//	        4·(T+1)    term offsets: T+1 × uint32 into the term bytes, first 0, last blobLen
//	        4·T        document frequencies: T × uint32, df of each term (>= 1)
//	        8·(T+1)    postings offsets: T+1 × uint64 into the postings, first 0, last postLen
//	        blobLen    term bytes: the T terms (UTF-8), concatenated in strictly increasing byte order
//	        postLen    postings: for each term, in term order, df pairs
//	                   (uvarint gap, uvarint tf) with gap = row - previous row - 1
//	                   (previous row = -1 before the first), rows increasing, tf >= 1
//	end-4   4     checksum: CRC-32C (Castagnoli) of every byte before it, uint32
//
// Open reads the whole file once, checks the size of every section, the
// checksum, then the consistency of the sections (sorted terms, monotone
// offsets, df and tf ranges, postings that decode to exactly df entries,
// lengths that sum to sumTF), and keeps the sections as sub-slices of the
// one buffer. Any failure wraps ErrCorrupt and names the section and offset.
package bm25
