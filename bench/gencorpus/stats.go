package gencorpus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/rlsearch/rlsearch/bm25"
	"github.com/rlsearch/rlsearch/corpus"
)

// Constants of the co-occurrence measure (CorpusStats.StrongPairs): the "mid-frequency" terms are those of df rank
// [MidRankLo, MidRankHi) (0-based, by descending df, ties by term), which
// skips the near-stop-words at the top and the noise at the bottom.
const (
	MidRankLo = 50
	MidRankHi = 550
	// minPairExpected is the least expected co-occurrence count of a pair
	// under independence for it to count in StrongPairs.
	minPairExpected = 5.0
)

// StatsConfig selects the rows of a corpus file to measure.
type StatsConfig struct {
	// Label names the corpus in tables (default: the path).
	Label string
	// From and To select rows [From, To) (0-based, after empty passages are
	// skipped, as the index numbers them); To = 0 means the end.
	From, To int
	// Workers analyze passages in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Summary is the mean and quantiles of a per-passage count.
type Summary struct {
	Mean          float64
	P50, P90, Max int
}

func summarize(xs []int32) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	q := func(f float64) int { return int(s[min(len(s)-1, int(f*float64(len(s))))]) }
	return Summary{Mean: sum / float64(len(s)), P50: q(0.5), P90: q(0.9), Max: int(s[len(s)-1])}
}

// TermDF is a term and its document frequency as a fraction of the passages.
type TermDF struct {
	Term string
	DF   float64
}

// CorpusStats are the term statistics of a corpus sample, over the terms
// that BM25 indexes (bm25.Analyze of the whole contents, title included).
type CorpusStats struct {
	Label    string
	Passages int
	// Words is the whitespace-separated surface words per passage (text only).
	Words Summary
	// Terms is the analyzed terms per passage (the BM25 document length).
	Terms Summary
	// Distinct is the distinct terms per passage (postings per document).
	Distinct Summary
	// RepeatFraction is the fraction of (document, term) postings with tf > 1.
	RepeatFraction float64
	// Postings is the number of (document, term) postings.
	Postings int64
	// Vocab is the number of distinct terms.
	Vocab int
	// DF quantiles over the vocabulary (in documents), and the fraction of
	// terms that occur in one document only.
	DFP50, DFP90, DFP99, DFMax int
	DF1Fraction                float64
	// TopDF are the 10 terms of highest df, as fractions of Passages.
	TopDF []TermDF
	// MeanDocTermDF is the mean over passages of the mean df/Passages of the
	// passage's distinct terms: how common a passage's vocabulary is.
	MeanDocTermDF float64
	// StrongPairs is the fraction of pairs of mid-frequency terms (df ranks
	// [MidRankLo, MidRankHi)) with an expected co-occurrence count under
	// independence (df_a*df_b/Passages) of at least 5 whose observed count
	// of passages holding both is at least twice that: topical clustering.
	// (A global observed/expected ratio is not used: it is dominated by the
	// variance of passage lengths, 1.44 real vs 1.50 unigram.)
	StrongPairs float64
	// StrongPairsN is the number of pairs StrongPairs is computed over.
	StrongPairsN int

	words []int32 // Words per passage, for LengthKS
}

// LengthKS is the Kolmogorov-Smirnov distance between the words-per-passage
// distributions of s and o (0 = identical, 1 = disjoint).
func (s *CorpusStats) LengthKS(o *CorpusStats) float64 { return KSDistance(s.words, o.words) }

// ErrEmptySample is returned when the selected rows hold no passage.
var ErrEmptySample = errors.New("gencorpus: no passages in the selected rows")

// CollectStats measures the rows [cfg.From, cfg.To) of the corpus at path
// (plain, .gz or .zst JSONL read by the corpus package). It holds the
// distinct term ids of every selected passage in memory (4 bytes each, about
// 300 bytes a passage) plus the vocabulary. Errors: corpus read errors,
// ErrBadConfig for a bad range, ErrEmptySample, ctx.Err().
func CollectStats(ctx context.Context, path string, cfg StatsConfig) (*CorpusStats, error) {
	if cfg.From < 0 || cfg.To < 0 || (cfg.To > 0 && cfg.To <= cfg.From) {
		return nil, fmt.Errorf("%w: rows [%d, %d) of %s: want 0 <= From < To (To 0 = end)", ErrBadConfig, cfg.From, cfg.To, path)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Label == "" {
		cfg.Label = path
	}
	r, err := corpus.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()

	type doc struct {
		contents string
		words    int32
		terms    []string
	}
	const batch = 512
	type job struct {
		docs []doc
		done chan struct{}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *job)
	order := make(chan *job, 2*cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				for i := range j.docs {
					d := &j.docs[i]
					_, text, _ := strings.Cut(d.contents, "\n")
					d.words = int32(len(strings.Fields(text)))
					d.terms = bm25.Analyze(d.contents)
					slices.Sort(d.terms)
					d.contents = ""
				}
				close(j.done)
			}
		}()
	}
	var rerr error
	go func() {
		defer close(order)
		defer close(jobs)
		row := 0
		for {
			var docs []doc
			for len(docs) < batch {
				p, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					rerr = err
					break
				}
				row++
				if row-1 < cfg.From {
					continue
				}
				if cfg.To > 0 && row-1 >= cfg.To {
					break
				}
				docs = append(docs, doc{contents: p.Contents})
			}
			if len(docs) == 0 {
				return
			}
			j := &job{docs: docs, done: make(chan struct{})}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
			if len(docs) < batch {
				return
			}
		}
	}()

	st := &CorpusStats{Label: cfg.Label}
	ids := make(map[string]int32)
	var terms []string
	var df []int32
	var words, lens, distinct []int32
	var docTerms []int32 // distinct term ids, passage after passage
	var repeats int64
	for j := range order {
		select {
		case <-j.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			continue
		}
		for _, d := range j.docs {
			words = append(words, d.words)
			lens = append(lens, int32(len(d.terms)))
			nd := int32(0)
			for i := 0; i < len(d.terms); {
				k := i + 1
				for k < len(d.terms) && d.terms[k] == d.terms[i] {
					k++
				}
				if k-i > 1 {
					repeats++
				}
				id, ok := ids[d.terms[i]]
				if !ok {
					id = int32(len(terms))
					ids[d.terms[i]] = id
					terms = append(terms, d.terms[i])
					df = append(df, 0)
				}
				df[id]++
				docTerms = append(docTerms, id)
				nd++
				i = k
			}
			distinct = append(distinct, nd)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, rerr
	}
	if len(lens) == 0 {
		return nil, fmt.Errorf("%w: %s rows [%d, %d)", ErrEmptySample, path, cfg.From, cfg.To)
	}
	n := len(lens)
	st.Passages = n
	st.Words, st.Terms, st.Distinct = summarize(words), summarize(lens), summarize(distinct)
	st.words = words
	st.Postings = int64(len(docTerms))
	st.RepeatFraction = float64(repeats) / float64(max(1, st.Postings))
	st.Vocab = len(terms)

	byDF := make([]int32, len(terms)) // term ids by descending df, ties by term
	for i := range byDF {
		byDF[i] = int32(i)
	}
	sort.Slice(byDF, func(a, b int) bool {
		x, y := byDF[a], byDF[b]
		if df[x] != df[y] {
			return df[x] > df[y]
		}
		return terms[x] < terms[y]
	})
	sorted := make([]int32, len(df))
	df1 := 0
	for i, id := range byDF {
		sorted[len(df)-1-i] = df[id] // ascending
		if df[id] == 1 {
			df1++
		}
	}
	q := func(f float64) int { return int(sorted[min(len(sorted)-1, int(f*float64(len(sorted))))]) }
	st.DFP50, st.DFP90, st.DFP99, st.DFMax = q(0.5), q(0.9), q(0.99), int(sorted[len(sorted)-1])
	st.DF1Fraction = float64(df1) / float64(len(terms))
	for _, id := range byDF[:min(10, len(byDF))] {
		st.TopDF = append(st.TopDF, TermDF{terms[id], float64(df[id]) / float64(n)})
	}

	// Mean df of a passage's terms, and co-occurrence of mid-frequency terms.
	mid := make([]int32, len(terms)) // term id -> mid rank index + 1, 0 = not mid
	lo, hi := min(MidRankLo, len(byDF)), min(MidRankHi, len(byDF))
	for i, id := range byDF[lo:hi] {
		mid[id] = int32(i + 1)
	}
	k := hi - lo
	pairs := make([]uint32, k*k)
	var sumDocDF float64
	off := 0
	var in []int32
	for _, nd := range distinct {
		var s float64
		in = in[:0]
		for _, id := range docTerms[off : off+int(nd)] {
			s += float64(df[id])
			if m := mid[id]; m > 0 {
				in = append(in, m-1)
			}
		}
		if nd > 0 {
			sumDocDF += s / float64(nd) / float64(n)
		}
		for a := range in {
			for b := a + 1; b < len(in); b++ {
				x, y := in[a], in[b]
				if x > y {
					x, y = y, x
				}
				pairs[int(x)*k+int(y)]++
			}
		}
		off += int(nd)
	}
	st.MeanDocTermDF = sumDocDF / float64(n)
	strong := 0
	for x := range k {
		for y := x + 1; y < k; y++ {
			e := float64(df[byDF[lo+x]]) * float64(df[byDF[lo+y]]) / float64(n)
			if e < minPairExpected {
				continue
			}
			st.StrongPairsN++
			if float64(pairs[x*k+y]) >= 2*e {
				strong++
			}
		}
	}
	if st.StrongPairsN > 0 {
		st.StrongPairs = float64(strong) / float64(st.StrongPairsN)
	}
	return st, nil
}

// WriteStatsTable writes the statistics side by side, one column per corpus
// (text/tabwriter).
func WriteStatsTable(w io.Writer, stats []*CorpusStats) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(name string, f func(s *CorpusStats) string) {
		fmt.Fprint(tw, name, "\t")
		for _, s := range stats {
			fmt.Fprint(tw, f(s), "\t")
		}
		fmt.Fprintln(tw)
	}
	sum := func(s Summary) string { return fmt.Sprintf("%.1f / %d / %d", s.Mean, s.P50, s.P90) }
	row("corpus", func(s *CorpusStats) string { return s.Label })
	row("passages", func(s *CorpusStats) string { return fmt.Sprint(s.Passages) })
	row("words/passage mean/p50/p90", func(s *CorpusStats) string { return sum(s.Words) })
	row("KS distance of words/passage vs column 1", func(s *CorpusStats) string { return fmt.Sprintf("%.4f", stats[0].LengthKS(s)) })
	row("terms/passage mean/p50/p90", func(s *CorpusStats) string { return sum(s.Terms) })
	row("distinct terms/passage", func(s *CorpusStats) string { return sum(s.Distinct) })
	row("postings with tf>1", func(s *CorpusStats) string { return fmt.Sprintf("%.4f", s.RepeatFraction) })
	row("postings", func(s *CorpusStats) string { return fmt.Sprint(s.Postings) })
	row("vocabulary", func(s *CorpusStats) string { return fmt.Sprint(s.Vocab) })
	row("df p50/p90/p99/max", func(s *CorpusStats) string {
		return fmt.Sprintf("%d / %d / %d / %d", s.DFP50, s.DFP90, s.DFP99, s.DFMax)
	})
	row("terms with df=1", func(s *CorpusStats) string { return fmt.Sprintf("%.4f", s.DF1Fraction) })
	row("mean df/N of a passage's terms", func(s *CorpusStats) string { return fmt.Sprintf("%.5f", s.MeanDocTermDF) })
	row(fmt.Sprintf("df-rank %d-%d pairs with obs >= 2x exp", MidRankLo, MidRankHi), func(s *CorpusStats) string {
		return fmt.Sprintf("%.4f of %d", s.StrongPairs, s.StrongPairsN)
	})
	for i := range 10 {
		row(fmt.Sprintf("top df %d", i+1), func(s *CorpusStats) string {
			if i >= len(s.TopDF) {
				return "-"
			}
			return fmt.Sprintf("%s %.4f", s.TopDF[i].Term, s.TopDF[i].DF)
		})
	}
	return tw.Flush()
}

// KSDistance is the two-sample Kolmogorov-Smirnov statistic of two samples
// of per-passage counts: the largest gap between their empirical CDFs, in
// [0, 1]. It returns 1 when a sample is empty.
func KSDistance(a, b []int32) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 1
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	var i, j int
	d := 0.0
	for i < len(x) && j < len(y) {
		v := min(x[i], y[j])
		for i < len(x) && x[i] == v {
			i++
		}
		for j < len(y) && y[j] == v {
			j++
		}
		d = math.Max(d, math.Abs(float64(i)/float64(len(x))-float64(j)/float64(len(y))))
	}
	return d
}
