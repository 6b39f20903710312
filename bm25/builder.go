package bm25

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
)

// Errors returned by Builder.
var (
	// ErrTooManyDocs: an index holds at most math.MaxInt32 rows (rows are int32).
	ErrTooManyDocs = errors.New("bm25: too many documents")
	// ErrTooLarge: a value outgrew its field in the file format.
	ErrTooLarge = errors.New("bm25: index too large for the file format")
	// ErrBuilderDone: Add or WriteFile after WriteFile or Abort.
	ErrBuilderDone = errors.New("bm25: builder already written or aborted")
)

// Pipeline sizes: documents per analysis job, and jobs in flight per worker
// (bounds the memory of queued texts and analyzed results to a few MiB).
const (
	batchDocs     = 256
	jobsPerWorker = 2
	// maxOpenRuns is the most spilled runs merged at once; past it the runs
	// are compacted into one (a second merge pass), which keeps the number
	// of open files bounded for any budget.
	maxOpenRuns = 64
	// termOverhead estimates the bytes per distinct in-memory term besides
	// its text and postings: map entry, name slice entry, buildTerm.
	termOverhead = 112
)

// Builder accumulates documents into an inverted index and writes it as one
// file (format in the package documentation).
//
// Memory: postings and dictionary stay under Config.MemoryBudget; past it
// they are spilled as a sorted run to Config.TempDir and merged by
// WriteFile. Outside the budget: 4 bytes per document (its length) and the
// analysis pipeline (Config.Workers goroutines, a few MiB). The texts
// themselves are not kept.
//
// A Builder is not safe for concurrent use. After WriteFile or Abort it is
// finished: Add and WriteFile return ErrBuilderDone. Call Abort (for
// example deferred) to stop the analysis goroutines and remove the
// temporary runs of a build that is given up; a Builder dropped without
// WriteFile or Abort leaks its goroutines. Abort after WriteFile does
// nothing.
type Builder struct {
	k1, b   float32
	budget  int64
	tempDir string
	workers int

	// Caller side.
	rows     int32
	batch    []string
	seq      int
	started  bool
	finished bool
	jobs     chan *job
	tokens   chan struct{}
	applied  chan struct{} // closed when the applier has finished

	errMu sync.Mutex
	err   error

	// Applier side: owned by the applier goroutine while the pipeline runs,
	// by the caller after it stopped.
	mem     memIndex
	docLens []uint32
	runs    []string // spilled run files, in row order

	// plan is the shard plan of NewShardBuilder (nil: one unsharded file);
	// shard is the applier's current shard, rows advancing in order.
	plan  *ShardPlan
	shard int
}

// memIndex is the in-memory part of the index: postings of the rows since
// the last spill, with gaps relative to the term's previous row (-1 first).
type memIndex struct {
	dict  map[string]int32 // term -> term id (insertion order)
	terms []buildTerm
	names []string
	est   int64 // estimated bytes
}

type buildTerm struct {
	post    []byte // (uvarint row gap, uvarint tf)*
	lastDoc int32  // last row written to post, -1 for none
	df      uint32 // postings in post
	xdf     uint32 // rows of unwritten shards that hold the term (NewShardBuilder)
}

// job is one batch of documents to analyze; the worker fills the results:
// per document its length and its distinct terms (sorted) with their tf.
type job struct {
	seq   int
	texts []string
	dls   []uint32
	nuniq []int32  // distinct terms per document
	arena []byte   // the distinct terms, concatenated
	tlens []uint16 // their lengths
	tfs   []uint32 // their tfs
	err   error
}

// NewBuilder returns an empty Builder, or an error wrapping ErrConfig when
// cfg is invalid. It starts no goroutine until the first Add.
func NewBuilder(cfg Config) (*Builder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k1, b := cfg.params()
	bd := &Builder{k1: k1, b: b, budget: cfg.MemoryBudget, tempDir: cfg.TempDir, workers: cfg.Workers}
	if bd.budget == 0 {
		bd.budget = DefaultMemoryBudget
	}
	if bd.tempDir == "" {
		bd.tempDir = os.TempDir()
	}
	if bd.workers == 0 {
		bd.workers = runtime.GOMAXPROCS(0)
	}
	bd.mem.reset()
	return bd, nil
}

func (m *memIndex) reset() {
	*m = memIndex{dict: make(map[string]int32)}
}

// NumDocs is the number of documents added so far.
func (bd *Builder) NumDocs() int { return int(bd.rows) }

func (bd *Builder) setErr(err error) {
	bd.errMu.Lock()
	if bd.err == nil {
		bd.err = err
	}
	bd.errMu.Unlock()
}

func (bd *Builder) loadErr() error {
	bd.errMu.Lock()
	defer bd.errMu.Unlock()
	return bd.err
}

// Add appends text as the next row: the first call returns row 0, the next
// row 1, and so on. A text with no term (empty, punctuation, stop words
// only) still takes a row and is never matched. The text is analyzed with
// Analyze on the Builder's worker goroutines, and its postings are applied
// in row order; an error found there (for example a failed spill to
// TempDir) is returned by a later Add or by WriteFile. Add returns
// ErrTooManyDocs after math.MaxInt32 rows and ErrBuilderDone after
// WriteFile or Abort.
func (bd *Builder) Add(text string) (row int32, err error) {
	if bd.finished {
		return -1, ErrBuilderDone
	}
	if err := bd.loadErr(); err != nil {
		return -1, err
	}
	if bd.rows >= math.MaxInt32 {
		return -1, ErrTooManyDocs
	}
	if p := bd.plan; p != nil && bd.rows >= p.Bounds[len(p.Bounds)-1] {
		return -1, fmt.Errorf("%w: row %d is beyond the plan's %d rows", ErrShardPlan, bd.rows, p.Bounds[len(p.Bounds)-1])
	}
	if !bd.started {
		bd.start()
	}
	bd.batch = append(bd.batch, text)
	row = bd.rows
	bd.rows++
	if len(bd.batch) == batchDocs {
		bd.dispatch()
	}
	return row, nil
}

func (bd *Builder) start() {
	bd.started = true
	bd.jobs = make(chan *job, bd.workers)
	bd.tokens = make(chan struct{}, jobsPerWorker*bd.workers+1)
	bd.applied = make(chan struct{})
	results := make(chan *job, bd.workers)
	var wg sync.WaitGroup
	for range bd.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var a analyzer
			for j := range bd.jobs {
				j.analyze(&a)
				results <- j
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()
	go bd.applyLoop(results)
}

func (bd *Builder) dispatch() {
	if len(bd.batch) == 0 {
		return
	}
	bd.tokens <- struct{}{}
	bd.jobs <- &job{seq: bd.seq, texts: bd.batch}
	bd.seq++
	bd.batch = make([]string, 0, batchDocs)
}

// stop flushes the last batch and waits until every document is applied.
func (bd *Builder) stop() {
	if !bd.started {
		return
	}
	bd.dispatch()
	close(bd.jobs)
	<-bd.applied
	bd.started = false
}

// applyLoop applies analyzed jobs in sequence order.
func (bd *Builder) applyLoop(results <-chan *job) {
	defer close(bd.applied)
	pending := map[int]*job{}
	next := 0
	for j := range results {
		pending[j.seq] = j
		for {
			j, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if bd.loadErr() == nil {
				if err := bd.apply(j); err != nil {
					bd.setErr(err)
				}
			}
			<-bd.tokens
		}
	}
}

// analyze fills the job's results.
func (j *job) analyze(a *analyzer) {
	type tok struct{ off, n int }
	var toks []tok
	var buf []byte
	for _, text := range j.texts {
		toks, buf = toks[:0], buf[:0]
		var dl uint64
		a.run(text, func(term []byte) {
			dl++
			toks = append(toks, tok{len(buf), len(term)})
			buf = append(buf, term...)
		})
		if dl > math.MaxUint32 && j.err == nil {
			j.err = fmt.Errorf("bm25: document has %d terms, more than 2^32-1", dl)
		}
		slices.SortFunc(toks, func(x, y tok) int { return bytes.Compare(buf[x.off:x.off+x.n], buf[y.off:y.off+y.n]) })
		uniq := int32(0)
		for i := 0; i < len(toks); {
			t := buf[toks[i].off : toks[i].off+toks[i].n]
			k := i + 1
			for k < len(toks) && bytes.Equal(buf[toks[k].off:toks[k].off+toks[k].n], t) {
				k++
			}
			j.arena = append(j.arena, t...)
			j.tlens = append(j.tlens, uint16(len(t)))
			j.tfs = append(j.tfs, uint32(k-i))
			uniq++
			i = k
		}
		j.dls = append(j.dls, uint32(dl))
		j.nuniq = append(j.nuniq, uniq)
	}
}

// apply adds the analyzed documents of j to the in-memory index, spilling
// when it passes the budget.
func (bd *Builder) apply(j *job) error {
	if j.err != nil {
		return j.err
	}
	m := &bd.mem
	u, off := 0, 0
	for d, dl := range j.dls {
		doc := int32(len(bd.docLens))
		if p := bd.plan; p != nil {
			for bd.shard+1 < len(p.Bounds) && doc >= p.Bounds[bd.shard+1] {
				bd.shard++
			}
			if bd.shard+1 == len(p.Bounds) {
				return fmt.Errorf("%w: row %d is beyond the shard plan's %d rows", ErrShardPlan, doc, p.Bounds[len(p.Bounds)-1])
			}
			if !p.keep(bd.shard) {
				// Counted for the corpus-wide document frequencies only.
				for range j.nuniq[d] {
					term := j.arena[off : off+int(j.tlens[u])]
					off += int(j.tlens[u])
					m.termID(term).xdf++
					u++
				}
				bd.docLens = append(bd.docLens, dl)
				continue
			}
		}
		for range j.nuniq[d] {
			term := j.arena[off : off+int(j.tlens[u])]
			off += int(j.tlens[u])
			t := m.termID(term)
			c0 := cap(t.post)
			t.post = binary.AppendUvarint(t.post, uint64(doc-t.lastDoc-1)) // gap-1 so the first row 0 codes as 0
			t.post = binary.AppendUvarint(t.post, uint64(j.tfs[u]))
			m.est += int64(cap(t.post) - c0)
			t.lastDoc = doc
			t.df++
			u++
		}
		bd.docLens = append(bd.docLens, dl)
	}
	if m.est >= bd.budget {
		return bd.spill()
	}
	return nil
}

// termID returns the in-memory entry of term, adding it when new.
func (m *memIndex) termID(term []byte) *buildTerm {
	id, ok := m.dict[string(term)]
	if !ok {
		id = int32(len(m.terms))
		name := string(term)
		m.dict[name] = id
		m.names = append(m.names, name)
		m.terms = append(m.terms, buildTerm{lastDoc: -1})
		m.est += termOverhead + int64(len(name))
	}
	return &m.terms[id]
}

// spill writes the in-memory postings as a sorted run and empties them;
// past maxOpenRuns runs it compacts them into one.
func (bd *Builder) spill() error {
	if len(bd.mem.terms) == 0 {
		return nil
	}
	src := bd.mem.source()
	path, err := bd.writeRun([]runSource{src})
	if err != nil {
		return err
	}
	bd.runs = append(bd.runs, path)
	bd.mem.reset()
	if len(bd.runs) >= maxOpenRuns {
		return bd.compact()
	}
	return nil
}

// compact merges all spilled runs into one.
func (bd *Builder) compact() error {
	srcs, closeAll, err := bd.openRuns()
	if err != nil {
		return err
	}
	path, err := bd.writeRun(srcs)
	closeAll()
	if err != nil {
		return err
	}
	for _, p := range bd.runs {
		os.Remove(p)
	}
	bd.runs = []string{path}
	return nil
}

func (bd *Builder) openRuns() ([]runSource, func(), error) {
	var srcs []runSource
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range bd.runs {
		f, err := os.Open(p)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("bm25: open run: %w", err)
		}
		files = append(files, f)
		src, err := newFileSource(f, len(bd.docLens))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		srcs = append(srcs, src)
	}
	return srcs, closeAll, nil
}

// writeRun merges srcs into a new run file in TempDir and returns its path.
func (bd *Builder) writeRun(srcs []runSource) (path string, err error) {
	f, err := os.CreateTemp(bd.tempDir, "bm25-run-*")
	if err != nil {
		return "", fmt.Errorf("bm25: spill run: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := &runWriter{w: bufio.NewWriterSize(f, 1<<20)}
	w.w.WriteString(runMagic)
	if err = merge(srcs, w); err != nil {
		return "", fmt.Errorf("bm25: spill run %s: %w", f.Name(), err)
	}
	w.w.WriteByte(0) // end marker: empty name
	if err = w.w.Flush(); err != nil {
		return "", fmt.Errorf("bm25: spill run %s: %w", f.Name(), err)
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("bm25: spill run %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}

// Abort stops the analysis goroutines and removes the temporary runs. The
// Builder is finished afterwards. It is safe to call more than once and
// after WriteFile.
func (bd *Builder) Abort() {
	if !bd.finished {
		bd.finished = true
		bd.stop()
	}
	bd.removeRuns()
	bd.mem.reset()
}

func (bd *Builder) removeRuns() {
	for _, p := range bd.runs {
		os.Remove(p)
	}
	bd.runs = nil
}

// WriteFile waits for the pending documents, merges the spilled runs and
// the in-memory postings into the index file at path (format in the
// package documentation), streaming, with memory bounded by the budget plus
// a few MiB. It writes to a temporary file in the same directory, syncs it
// and renames it over path, so readers see either the old file or the
// complete new one; side files go to TempDir. The runs and side files are
// removed whether it succeeds or not, and the Builder is finished.
// The bytes of the file depend only on the documents and K1, B, never on
// MemoryBudget or Workers.
func (bd *Builder) WriteFile(path string) (err error) {
	if bd.plan != nil {
		return fmt.Errorf("%w: a shard builder writes with WriteShards, not WriteFile", ErrShardPlan)
	}
	srcs, done, err := bd.finish()
	if err != nil {
		return err
	}
	defer done()
	return writeIndexFile(path, bd.tempDir, bd.k1, bd.b, bd.docLens, srcs)
}

// finish stops the pipeline and returns the sources to merge, in row
// order; done closes them and aborts the Builder (removing the runs).
func (bd *Builder) finish() ([]runSource, func(), error) {
	if bd.finished {
		return nil, nil, ErrBuilderDone
	}
	bd.finished = true
	bd.stop()
	if err := bd.loadErr(); err != nil {
		bd.Abort()
		return nil, nil, err
	}
	if len(bd.runs)+1 > maxOpenRuns {
		if err := bd.compact(); err != nil {
			bd.Abort()
			return nil, nil, err
		}
	}
	srcs, closeAll, err := bd.openRuns()
	if err != nil {
		bd.Abort()
		return nil, nil, err
	}
	return append(srcs, bd.mem.source()), func() { closeAll(); bd.Abort() }, nil
}
