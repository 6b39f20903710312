package gencorpus

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/rlsearch/rlsearch/internal/atomicfile"
)

// Models accepted by Config.Model.
const (
	ModelTopical = "topical"
	ModelUnigram = "unigram"
)

// DefaultTopicProb is the probability that a word of a topical passage comes
// from its topic passage. Measured on the wiki_multihop seed (18,175 real
// passages vs 18,175 generated, seed 1, bm25.Analyze terms), fraction of
// postings with tf > 1 / mean distinct terms per passage / mean df/N of a
// passage's terms: real 0.197 / 44.4 / 0.0334; p=0.5: 0.160 / 48.0 / 0.0364;
// p=0.6: 0.205 / 45.1 / 0.0344; p=0.7: 0.258 / 41.8 / 0.0321. 0.6 is the
// closest of these on all three (the best fit is near 0.58).
const DefaultTopicProb = 0.6

// ChunkRows is the number of rows generated from one random stream; chunk c
// covers rows [c*ChunkRows, (c+1)*ChunkRows). Changing it changes the output.
const ChunkRows = 1024

// ErrBadConfig is returned (wrapped, naming the field) for an invalid Config.
var ErrBadConfig = errors.New("gencorpus: bad config")

// Config configures Generate and WriteFile. The zero value of every optional
// field means its documented default.
type Config struct {
	// Seed is the path of the real seed corpus (Search-R1 JSONL, plain, .gz
	// or .zst), required.
	Seed string
	// N is the total number of passages written, real ones included, > 0.
	// When N is at most the number of seed passages, the output is the first
	// N seed passages.
	N int
	// RandSeed seeds the generator: the same Config gives the same bytes.
	RandSeed int64
	// Model is ModelTopical (default when empty) or ModelUnigram.
	Model string
	// TopicProb is the topical model's probability of drawing a word from the
	// topic passage, in (0, 1]; 0 means DefaultTopicProb. Ignored by unigram.
	TopicProb float64
	// NoRareVariants turns off vocabulary growth in the topical model. By
	// default a word that occurs once in the seed text (a hapax legomenon)
	// is written, in generated row r, as a variant: the word with a suffix
	// of the letters q, x, z, j (before any trailing punctuation) that
	// encodes k = isqrt(r / seed passages), k >= 1. The vocabulary then grows
	// like the square root of the corpus size (Heaps' law, beta = 0.5)
	// instead of stopping at the seed's, and a rare word's df grows like the
	// square root of N instead of linearly. Ignored by unigram.
	NoRareVariants bool
	// Workers is the number of generating goroutines; 0 means GOMAXPROCS.
	// The output does not depend on it.
	Workers int
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Seed == "":
		return fmt.Errorf("%w: Seed (the seed corpus path) is required", ErrBadConfig)
	case c.N <= 0:
		return fmt.Errorf("%w: N must be positive, got %d", ErrBadConfig, c.N)
	case c.N > math.MaxInt32:
		return fmt.Errorf("%w: N must be at most %d, got %d", ErrBadConfig, math.MaxInt32, c.N)
	case c.Model != "" && c.Model != ModelTopical && c.Model != ModelUnigram:
		return fmt.Errorf("%w: Model %q: want %q or %q", ErrBadConfig, c.Model, ModelTopical, ModelUnigram)
	case math.IsNaN(c.TopicProb) || c.TopicProb < 0 || c.TopicProb > 1:
		return fmt.Errorf("%w: TopicProb must be in (0, 1] (0 = default %g), got %g", ErrBadConfig, DefaultTopicProb, c.TopicProb)
	case c.Workers < 0:
		return fmt.Errorf("%w: Workers must be >= 0 (0 = GOMAXPROCS), got %d", ErrBadConfig, c.Workers)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Model == "" {
		c.Model = ModelTopical
	}
	if c.TopicProb == 0 {
		c.TopicProb = DefaultTopicProb
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// GenStats summarises one generation.
type GenStats struct {
	Passages  int           // rows written
	Real      int           // seed passages among them (the first rows)
	Generated int           // generated passages
	Bytes     int64         // uncompressed JSONL bytes
	Elapsed   time.Duration // seed loading included
}

// Generate writes cfg.N passages of JSONL to w: the real seed passages
// first, then generated ones (see the package doc). Progress (a bar on a
// terminal, else a line every 10 s) goes to progress when it is not nil.
// The bytes written depend only on cfg's Seed contents, N, RandSeed, Model
// and TopicProb, never on Workers. Generate stops with ctx.Err() when ctx
// is cancelled, leaving a partial stream in w. Errors: ErrBadConfig,
// ErrIDCollision, seed read errors, write errors. Safe for concurrent use
// (calls share nothing).
func Generate(ctx context.Context, cfg Config, w io.Writer, progress io.Writer) (GenStats, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return GenStats{}, err
	}
	cfg = cfg.withDefaults()
	m, err := loadSeed(ctx, cfg.Seed, cfg.N)
	if err != nil {
		return GenStats{}, err
	}
	st := GenStats{Passages: cfg.N, Real: min(cfg.N, m.passages())}
	st.Generated = cfg.N - st.Real

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chunks := (cfg.N + ChunkRows - 1) / ChunkRows
	type result struct {
		chunk int
		buf   *[]byte
		done  chan struct{}
	}
	pool := sync.Pool{New: func() any { b := make([]byte, 0, ChunkRows*800); return &b }}
	jobs := make(chan *result)
	order := make(chan *result, 2*cfg.Workers)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGen(m, cfg)
			for res := range jobs {
				b := pool.Get().(*[]byte)
				*b = g.chunk((*b)[:0], res.chunk)
				res.buf = b
				close(res.done)
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for c := range chunks {
			res := &result{chunk: c, done: make(chan struct{})}
			select {
			case order <- res: // bounds the chunks in flight
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- res:
			case <-ctx.Done():
				return
			}
		}
	}()
	prog := newProgress(progress, cfg.N)
	var werr error
	rows := 0
	for res := range order {
		select {
		case <-res.done:
		case <-ctx.Done():
		}
		if werr == nil && ctx.Err() != nil {
			werr = ctx.Err()
		}
		if werr != nil {
			cancel()
			continue
		}
		n, err := w.Write(*res.buf)
		st.Bytes += int64(n)
		pool.Put(res.buf)
		res.buf = nil
		if err != nil {
			werr = fmt.Errorf("gencorpus: write: %w", err)
			cancel()
			continue
		}
		rows = min(rows+ChunkRows, cfg.N)
		prog.update(rows)
	}
	wg.Wait()
	prog.finish()
	st.Elapsed = time.Since(start)
	if werr != nil {
		return st, werr
	}
	return st, nil
}

// gen generates chunks; one per worker goroutine.
type gen struct {
	m        *seedModel
	cfg      Config
	topical  bool
	thresh   uint64 // a word comes from the topic when the low 32 random bits < thresh
	nPass    uint64
	nText    uint64
	nTitle   uint64
	nReal    int
	variants bool
	pcg      *rand.PCG
	seedHash uint64
}

func newGen(m *seedModel, cfg Config) *gen {
	pcg := rand.NewPCG(0, 0)
	return &gen{
		m: m, cfg: cfg, topical: cfg.Model == ModelTopical,
		thresh: uint64(math.Round(cfg.TopicProb * (1 << 32))),
		nPass:  uint64(m.passages()), nText: uint64(len(m.text)), nTitle: uint64(len(m.title)),
		nReal: m.passages(), variants: cfg.Model == ModelTopical && !cfg.NoRareVariants,
		pcg:      pcg,
		seedHash: splitmix(uint64(cfg.RandSeed) ^ 0x9e3779b97f4a7c15),
	}
}

// splitmix is SplitMix64's finaliser (Steele, Lea, Flood 2014).
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pick maps 32 random bits to [0, n) (Lemire's multiply-shift; the bias is
// below n/2^32, negligible for tables of at most 2^31 entries).
func pick(r uint64, n uint64) uint64 { return (r & 0xffffffff) * n >> 32 }

// chunk appends the JSONL lines of chunk c to b.
func (g *gen) chunk(b []byte, c int) []byte {
	lo, hi := c*ChunkRows, min((c+1)*ChunkRows, g.cfg.N)
	for row := lo; row < hi && row < g.nReal; row++ {
		b = append(b, g.m.lines[row]...)
	}
	if hi <= g.nReal {
		return b
	}
	g.pcg.Seed(g.seedHash, splitmix(uint64(c)))
	for row := max(lo, g.nReal); row < hi; row++ {
		b = g.passage(b, row)
	}
	return b
}

// passage appends generated row's JSONL line to b.
func (g *gen) passage(b []byte, row int) []byte {
	m := g.m
	b = append(b, `{"id":"g`...)
	b = strconv.AppendInt(b, int64(row), 10)
	b = append(b, `","contents":"\"`...)
	s := pick(g.pcg.Uint64(), g.nPass) // topic (topical) or length donor (unigram)
	tLo, tHi := m.titleOff[s], m.titleOff[s+1]
	cLo, cHi := m.capsOff[s], m.capsOff[s+1]
	xLo, xHi := m.textOff[s], m.textOff[s+1]
	nTitle := int(tHi - tLo)
	if nTitle == 0 {
		nTitle = 1
	}
	for i := range nTitle {
		if i > 0 {
			b = append(b, ' ')
		}
		r := g.pcg.Uint64()
		var w int32
		switch {
		case !g.topical:
			w = m.title[pick(r, g.nTitle)]
		case tHi > tLo && (cHi == cLo || r>>63 == 0):
			w = m.title[uint64(tLo)+pick(r, uint64(tHi-tLo))]
		case cHi > cLo:
			w = m.caps[uint64(cLo)+pick(r, uint64(cHi-cLo))]
		default:
			w = m.text[uint64(xLo)+pick(r, uint64(xHi-xLo))]
		}
		b = append(b, m.word(w)...)
	}
	b = append(b, `\"\n`...)
	n := int(xHi - xLo)
	topicN := uint64(xHi - xLo)
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		r := g.pcg.Uint64()
		var w int32
		if g.topical && (r>>32) < g.thresh {
			w = m.text[uint64(xLo)+pick(r, topicN)]
		} else {
			w = m.text[pick(r, g.nText)]
		}
		if w >= m.firstRare && g.variants {
			b = g.rare(b, w, row)
		} else {
			b = append(b, m.word(w)...)
		}
	}
	return append(b, "\"}\n"...)
}

// rare appends the variant of rare word w for row (see Config.NoRareVariants).
func (g *gen) rare(b []byte, w int32, row int) []byte {
	word := g.m.word(w)
	core := int(g.m.rareCore[w-g.m.firstRare])
	if core == 0 {
		return append(b, word...)
	}
	b = append(b, word[:core]...)
	k := isqrt(uint64(row / g.nReal))
	const letters = "qxzj"
	var tmp [32]byte
	i := len(tmp)
	for k > 0 { // bijective base 4: 1..4 = q..j, 5 = qq, ...
		k--
		i--
		tmp[i] = letters[k%4]
		k /= 4
	}
	b = append(b, tmp[i:]...)
	return append(b, word[core:]...)
}

// isqrt is the integer square root.
func isqrt(x uint64) uint64 {
	r := uint64(math.Sqrt(float64(x)))
	for r*r > x {
		r--
	}
	for (r+1)*(r+1) <= x {
		r++
	}
	return r
}

// WriteFile writes Generate's output to path atomically: into a temporary
// file in the same directory, renamed over path only after a complete,
// synced write. The output is zstd-compressed when path ends in .zst or
// .zstd (klauspost/compress, GOMAXPROCS encoder goroutines), gzip-compressed
// when it ends in .gz, else plain. On any error or cancellation the
// temporary file is removed and path is untouched.
func WriteFile(ctx context.Context, cfg Config, path string, progress io.Writer) (st GenStats, err error) {
	if err := cfg.Validate(); err != nil {
		return GenStats{}, err
	}
	if path == "" {
		return GenStats{}, fmt.Errorf("%w: output path is required", ErrBadConfig)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return GenStats{}, fmt.Errorf("%w: output %s is a directory; name the file to write", ErrBadConfig, path)
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return GenStats{}, fmt.Errorf("gencorpus: %w", err)
	}
	defer func() {
		if err != nil {
			f.Abort()
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var closer io.Closer
	switch {
	case strings.HasSuffix(path, ".zst") || strings.HasSuffix(path, ".zstd"):
		zw, err := zstd.NewWriter(bw, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)))
		if err != nil {
			return GenStats{}, fmt.Errorf("gencorpus: zstd: %w", err)
		}
		w, closer = zw, zw
	case strings.HasSuffix(path, ".gz"):
		gw := gzip.NewWriter(bw)
		w, closer = gw, gw
	}
	st, err = Generate(ctx, cfg, w, progress)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return st, err
	}
	if closer != nil {
		if err := closer.Close(); err != nil {
			return st, fmt.Errorf("gencorpus: compress %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return st, fmt.Errorf("gencorpus: write %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return st, fmt.Errorf("gencorpus: %w", err)
	}
	return st, nil
}

// progress reports rows written: a bar with ETA on a terminal, else a plain
// line every 10 s so that logs are not filled with carriage returns.
type progress struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), last: time.Now()}
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("generating"),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("passages"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond), progressbar.OptionSetWidth(30))
	}
	return p
}

func (p *progress) update(rows int) {
	if p.w == nil {
		return
	}
	if p.bar != nil {
		p.bar.Set(rows)
		return
	}
	if time.Since(p.last) >= 10*time.Second {
		p.last = time.Now()
		el := time.Since(p.start).Seconds()
		rate := float64(rows) / max(el, 1e-9)
		eta := time.Duration(float64(p.total-rows) / max(rate, 1e-9) * float64(time.Second)).Round(time.Second)
		fmt.Fprintf(p.w, "generating: %d/%d passages (%.1f%%), %.0f passages/s, ETA %s\n",
			rows, p.total, 100*float64(rows)/float64(p.total), rate, eta)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
