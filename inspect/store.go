package inspect

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/jsonl"
	"github.com/rlsearch/rlsearch/internal/progress"
)

// Dump states (DumpStatus.State).
const (
	StateLoading = "loading"
	StateReady   = "ready"
	StateFailed  = "failed"
)

// ErrNotReady is returned for a dump that is still loading or failed to load.
var ErrNotReady = errors.New("inspect: dump not loaded")

// Dump is a rollout dump read once into a compact row per rollout and a
// summary; a whole rollout is read again from the file when it is asked
// for, so memory stays that of the rows (about 0.5 KB a rollout) however
// large the rollouts are. Safe for concurrent use.
type Dump struct {
	Name string // the file's base name
	Path string

	an *Analyzer

	mu      sync.RWMutex
	state   string
	err     error
	size    int64 // file size in bytes
	done    int64 // bytes read so far
	rows    []Row
	offsets []int64 // byte offset of each rollout's line
	lengths []int   // its length in bytes
	summary *Summary

	cacheMu sync.Mutex
	cache   []cached // the rollouts opened last, newest last
}

// cached is an opened rollout; its trace was asked for or not.
type cached struct {
	i     int
	trace bool
	r     *Rollout
}

// cacheSize is how many opened rollouts a dump keeps (going back and
// forth between a few rollouts reads and scores none again).
const cacheSize = 8

// DumpStatus is what the page shows while a dump loads.
type DumpStatus struct {
	Name      string `json:"name"`
	State     string `json:"state"`
	Error     string `json:"error,omitempty"`
	Bytes     int64  `json:"bytes"`      // file size
	ReadBytes int64  `json:"read_bytes"` // bytes read so far
	Rollouts  int    `json:"rollouts"`   // readable lines so far
}

// LoadConfig configures LoadDump.
type LoadConfig struct {
	// Progress receives progress lines (nil = none).
	Progress io.Writer
	// Workers analyse lines in parallel (0 = GOMAXPROCS).
	Workers int
	// OnRollout, when set, is called with every rollout in dump order
	// (from one goroutine), before it is dropped; its error stops the load.
	OnRollout func(*Rollout) error
	// Prepare, when set, runs on every rollout in the workers before
	// OnRollout (the report's program replays); its error stops the load.
	Prepare func(context.Context, *Rollout) error
	// MaxLine bounds a line in bytes (0 = jsonl.DefaultMaxLine, 64 MiB);
	// a longer line is a bad line.
	MaxLine int
}

// NewDump returns a dump of path in the loading state; Load reads it.
func NewDump(path string, an *Analyzer) *Dump {
	return &Dump{Name: filepath.Base(path), Path: path, an: an, state: StateLoading}
}

// LoadDump reads the dump at path (NewDump, then Load).
func LoadDump(ctx context.Context, path string, an *Analyzer, cfg LoadConfig) (*Dump, error) {
	d := NewDump(path, an)
	return d, d.Load(ctx, cfg)
}

// Status reports the dump's state and progress.
func (d *Dump) Status() DumpStatus {
	d.mu.RLock()
	defer d.mu.RUnlock()
	st := DumpStatus{Name: d.Name, State: d.state, Bytes: d.size, ReadBytes: d.done, Rollouts: len(d.rows)}
	if d.err != nil {
		st.Error = d.err.Error()
	}
	return st
}

// lineReader yields the lines of a stream with their byte offsets.
type lineReader struct {
	br  *bufio.Reader
	off int64
	max int
	buf []byte
}

// next returns the next line without its newline, its offset, and
// whether it was longer than max (then line is nil); io.EOF at the end.
func (lr *lineReader) next() (line []byte, off int64, tooLong bool, err error) {
	lr.buf = lr.buf[:0]
	off = lr.off
	for {
		chunk, err := lr.br.ReadSlice('\n')
		lr.off += int64(len(chunk))
		if !tooLong {
			if len(lr.buf)+len(chunk) > lr.max+2 { // + "\r\n"
				tooLong, lr.buf = true, lr.buf[:0]
			} else {
				lr.buf = append(lr.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(lr.buf) > 0 || tooLong):
			return lr.line(tooLong), off, tooLong, nil
		case err != nil:
			return nil, off, false, err
		}
		return lr.line(tooLong), off, tooLong, nil
	}
}

func (lr *lineReader) line(tooLong bool) []byte {
	if tooLong {
		return nil
	}
	return bytes.TrimRight(lr.buf, "\r\n")
}

// pending is a line waiting for analysis.
type pending struct {
	line    []byte
	n       int
	off     int64
	tooLong bool
	r       *Rollout
	err     error
}

// Load reads the whole dump: every line is analysed (Analyzer.Analyze),
// bad lines are counted and named, and the rows and summary are built.
// It returns the file's error or ctx's; bad lines are no error. Call it
// once.
func (d *Dump) Load(ctx context.Context, cfg LoadConfig) error {
	err := d.load(ctx, cfg)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.state, d.err = StateFailed, err
		return err
	}
	d.state = StateReady
	return nil
}

func (d *Dump) load(ctx context.Context, cfg LoadConfig) error {
	start := time.Now()
	f, err := os.Open(d.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.size = fi.Size()
	d.mu.Unlock()
	maxLine := cfg.MaxLine
	if maxLine <= 0 {
		maxLine = jsonl.DefaultMaxLine
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	prog := progress.New(cfg.Progress, "inspect: "+d.Name, "bytes", int(fi.Size()))
	lr := &lineReader{br: bufio.NewReaderSize(f, 1<<20), max: maxLine}
	var (
		rows       []Row
		offsets    []int64
		lengths    []int
		bad        []BadLine
		nbad       int
		lines      int
		codes      = map[string]int{}
		rewardErrs = map[string]*Count{}
	)
	const batchLines, batchBytes = 256, 32 << 20
	for eof := false; !eof; {
		var batch []*pending
		size := 0
		for len(batch) < batchLines && size < batchBytes {
			line, off, tooLong, err := lr.next()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return fmt.Errorf("read %s: %w", d.Path, err)
			}
			lines++ // line numbers count blank lines too, as an editor's do
			if !tooLong && len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			batch = append(batch, &pending{line: bytes.Clone(line), n: lines, off: off, tooLong: tooLong})
			size += len(line)
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(workers)
		for k, p := range batch {
			if p.tooLong {
				continue
			}
			index := len(rows) + k // provisional: set below, once the bad lines before it are known
			g.Go(func() error {
				r, err := d.an.Analyze(gctx, p.line, p.n, index)
				if err == nil && cfg.Prepare != nil {
					err = cfg.Prepare(gctx, r)
				}
				if errors.Is(err, ErrBadLine) {
					p.err = err
					return nil
				}
				p.r = r
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for _, p := range batch {
			if p.tooLong || p.err != nil {
				nbad++
				if len(bad) < MaxBadLines {
					msg := fmt.Sprintf("line over %d bytes", maxLine)
					if p.err != nil {
						msg = strings.TrimPrefix(p.err.Error(), ErrBadLine.Error()+": ")
					}
					bad = append(bad, BadLine{Line: p.n, Error: msg, Preview: preview(p.line)})
				}
				continue
			}
			p.r.Index = len(rows)
			if cfg.OnRollout != nil {
				if err := cfg.OnRollout(p.r); err != nil {
					return err
				}
			}
			for _, c := range p.r.Codes {
				codes[c]++
			}
			for kind, msg := range p.r.RewardErrors {
				c := rewardErrs[string(kind)]
				if c == nil {
					c = &Count{Name: string(kind), Label: msg}
					rewardErrs[string(kind)] = c
				}
				c.Count++
			}
			rows = append(rows, newRow(p.r))
			offsets = append(offsets, p.off)
			lengths = append(lengths, len(p.line))
		}
		d.mu.Lock()
		d.done = lr.off
		d.rows = rows
		d.mu.Unlock()
		prog.Set(int(lr.off))
	}
	prog.Finish()
	rankIDs(rows)
	s := summarize(rows, codes, rewardErrs)
	s.Dump, s.Lines, s.Bad, s.BadLines = d.Name, len(rows)+nbad, nbad, append(s.BadLines, bad...)
	s.Judge = d.an.Judge()
	if g := d.an.Gold(); g != nil {
		s.Gold = g.name
	}
	s.LoadSeconds = time.Since(start).Seconds()
	d.mu.Lock()
	d.rows, d.offsets, d.lengths, d.summary = rows, offsets, lengths, s
	d.mu.Unlock()
	return nil
}

// rankIDs sets each row's IDRank: its position when sorted by id (byte
// order), ties in dump order.
func rankIDs(rows []Row) {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(rows[a].ID, rows[b].ID) })
	for rank, i := range order {
		rows[i].IDRank = rank
	}
}

// preview is the first 160 bytes of a bad line as valid UTF-8.
func preview(line []byte) string {
	const n = 160
	s := string(line[:min(len(line), n)])
	if len(line) > n {
		s += "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// ready returns the loaded rows and summary, or ErrNotReady.
func (d *Dump) ready() ([]Row, *Summary, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.state != StateReady {
		if d.err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %v", ErrNotReady, d.Name, d.err)
		}
		return nil, nil, fmt.Errorf("%w: %s is still loading (%d of %d bytes read)", ErrNotReady, d.Name, d.done, d.size)
	}
	return d.rows, d.summary, nil
}

// Summary returns the dump's summary (ErrNotReady until loaded). The
// value is shared: do not modify it.
func (d *Dump) Summary() (*Summary, error) {
	_, s, err := d.ready()
	return s, err
}

// Rows returns the dump's rows in dump order (shared: do not modify).
func (d *Dump) Rows() ([]Row, error) {
	rows, _, err := d.ready()
	return rows, err
}

// Page runs q over the dump's rows. Errors: ErrNotReady, or a
// *rlsearch.FieldError naming the bad query parameter.
func (d *Dump) Page(q Query) (Page, error) {
	rows, s, err := d.ready()
	if err != nil {
		return Page{}, err
	}
	return query(rows, s, q)
}

// ErrChanged is returned when the dump file changed after it was loaded.
var ErrChanged = errors.New("inspect: the dump file changed since it was loaded")

// Rollout reads rollout i again from the file and analyses it; with
// tracer non-nil its programs are replayed (Tracer.Trace). The last
// rollouts opened are kept: the result is shared, do not modify it. Errors:
// ErrNotReady, a *rlsearch.FieldError "i" for an index out of range,
// ErrChanged, the file's.
func (d *Dump) Rollout(ctx context.Context, i int, tracer *Tracer) (*Rollout, error) {
	rows, _, err := d.ready()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(rows) {
		return nil, rlsearch.BadField("i", "rollout %d: the dump has %d (0..%d)", i, len(rows), len(rows)-1)
	}
	d.cacheMu.Lock()
	for _, c := range d.cache {
		if c.i == i && c.trace == (tracer != nil) {
			d.cacheMu.Unlock()
			return c.r, nil
		}
	}
	d.cacheMu.Unlock()
	r, err := d.read(ctx, i, rows[i], tracer)
	if err != nil {
		return nil, err
	}
	d.cacheMu.Lock()
	if len(d.cache) == cacheSize {
		d.cache = d.cache[1:]
	}
	d.cache = append(d.cache, cached{i, tracer != nil, r})
	d.cacheMu.Unlock()
	return r, nil
}

// read reads and analyses rollout i (row is its row).
func (d *Dump) read(ctx context.Context, i int, row Row, tracer *Tracer) (*Rollout, error) {
	f, err := os.Open(d.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line := make([]byte, d.lengths[i])
	if _, err := f.ReadAt(line, d.offsets[i]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrChanged, err)
	}
	r, err := d.an.Analyze(ctx, line, row.Line, i)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || r.ID != row.ID {
		return nil, fmt.Errorf("%w (line %d)", ErrChanged, row.Line)
	}
	if tracer != nil {
		if err := tracer.Trace(ctx, r); err != nil {
			r.TraceError = err.Error()
		}
	}
	return r, nil
}
