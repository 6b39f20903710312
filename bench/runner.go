package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Ours is the System of the rows this project measures.
const Ours = "rlsearch"

// ErrSkip marks a suite or case that cannot run here (no GPU, no ONNX
// Runtime, no model); wrap it with the reason: fmt.Errorf("%w: no GPU", ErrSkip).
// The report lists the reason instead of rows.
var ErrSkip = errors.New("skipped")

// ErrConfig is returned for bad Options (unknown suite, reps < 1, ...).
var ErrConfig = errors.New("bench: bad config")

// Case is one configuration of a suite, measured Options.Reps times.
type Case struct {
	// Config is the comparison key shared with peers (Key(Params) by
	// convention); Params the same values for plots and peers.
	Config string
	Params map[string]any
	Unit   string
	Note   string
	// Threads sets GOMAXPROCS while the case runs (0 = leave as is).
	Threads int
	// Run measures one repetition.
	Run func(ctx context.Context) (Rep, error)
}

// Suite is one selectable measurement set.
type Suite struct {
	Name string
	// Doc is one line for --help and the report.
	Doc string
	// Setup loads data and builds what the cases need (not timed), returning
	// the cases and a cleanup (may be nil). An error wrapping ErrSkip skips
	// the suite with its message.
	Setup func(ctx context.Context, env *Env) ([]Case, func(), error)
	// Rows, when set instead of Setup, measures the whole suite itself and
	// returns its rows, ours and its peers' (System tells them apart): for
	// suites whose systems must run side by side under one harness, such as
	// serve (servers under one load generator). It honours env.Peers and
	// env.Reps; an error wrapping ErrSkip skips the suite, other errors are
	// recorded with the rows returned so far.
	Rows func(ctx context.Context, env *Env) ([]Row, error)
}

// Options configure Run.
type Options struct {
	// Suites to run, in order; names must be in the suite list given to Run.
	Suites []string `json:"suites"`
	// Reps is the number of repetitions of every case (default 3).
	Reps int `json:"reps"`
	// Quick shrinks every suite (fewer datasets, configurations and time
	// per repetition) for a smoke run in well under a minute per suite.
	Quick bool `json:"quick"`
	// MinTime is the least time of one repetition of a case (default 1s,
	// Quick 100ms).
	MinTime time.Duration `json:"min_time_ns"`
	// Data is the shared dataset directory (../shared/data).
	Data string `json:"data"`
	// Work is a directory for indexes and generated corpora (created).
	Work string `json:"work"`
	// Root is the repository root, where scripts/ (the test-model
	// generators) and .cache/ (ONNX Runtime, tokenizers, models) are looked
	// up; "" means the working directory.
	Root string `json:"root,omitempty"`
	// Threads lists the thread counts (GOMAXPROCS) of suites that vary
	// them; default 1 and runtime.NumCPU().
	Threads []int `json:"threads"`
	// Seed seeds every random choice (default 1).
	Seed uint64 `json:"seed"`
	// Set holds suite-specific settings "suite.key" = value (for example
	// "bm25.gen=1000000", "encode.model=DIR"); see each suite's doc.
	Set map[string]string `json:"set,omitempty"`
	// Peers, when false, runs no registered peer.
	Peers bool `json:"peers"`
	// Interleave runs a suite with peers repetition by repetition: every
	// case of ours once, then each peer once (PeerOptions.Reps = 1), then
	// the next repetition, so that ours and the peers see the same machine
	// (load, thermal state) in turn instead of one after the other. A peer
	// is called Reps times; its rows' repetitions are joined by Config.
	// Peers that build an index cache it (bench/peers), so only the first
	// call builds.
	Interleave bool `json:"interleave,omitempty"`
	// Progress receives one line per repetition with the ETA; nil = none.
	Progress io.Writer `json:"-"`
}

// Env is what a suite's Setup gets: the options and the log.
type Env struct {
	Options
	// Log receives notes (what was built, what was skipped); never nil.
	Log io.Writer
}

// Path returns rel under Options.Root.
func (e *Env) Path(rel ...string) string {
	return filepath.Join(append([]string{e.Root}, rel...)...)
}

// Get returns the setting "suite.key" from Options.Set, or def.
func (e *Env) Get(suite, key, def string) string {
	if v, ok := e.Set[suite+"."+key]; ok {
		return v
	}
	return def
}

// Budget is the budget of one repetition: at least MinTime and minCalls,
// after one untimed warm-up call.
func (e *Env) Budget(minCalls int) Budget {
	return Budget{MinTime: e.MinTime, MinCalls: minCalls, Warmup: 1}
}

func (o *Options) defaults() error {
	if o.Reps == 0 {
		o.Reps = 3
	}
	if o.Reps < 1 {
		return fmt.Errorf("%w: reps %d: want >= 1", ErrConfig, o.Reps)
	}
	if o.MinTime == 0 {
		o.MinTime = time.Second
		if o.Quick {
			o.MinTime = 100 * time.Millisecond
		}
	}
	if o.MinTime < 0 {
		return fmt.Errorf("%w: min time %v: want > 0", ErrConfig, o.MinTime)
	}
	if len(o.Threads) == 0 {
		o.Threads = []int{1}
		if n := runtime.NumCPU(); n > 1 {
			o.Threads = append(o.Threads, n)
		}
	}
	for _, t := range o.Threads {
		if t < 1 {
			return fmt.Errorf("%w: threads %d: want >= 1", ErrConfig, t)
		}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return nil
}

// PeerOptions is what a peer runner gets: the run's options and the rows
// this project measured for the suite (their Config and Params say which
// configurations to run so that ratios can be taken).
type PeerOptions struct {
	Options
	Ours []Row
	Log  io.Writer
}

// PeerFunc measures a peer system on the suite's workload and returns its
// rows (System = the peer's name and version, Config equal to the Config of
// the matching row of ours). An error wrapping ErrSkip (peer not installed)
// is reported as a skip line; other errors too, without failing the run.
type PeerFunc func(ctx context.Context, suite string, opts PeerOptions) ([]Row, error)

type peer struct {
	name   string
	suites []string
	fn     PeerFunc
}

var (
	peersMu sync.Mutex
	peers   []peer
)

// RegisterPeer adds a peer runner for the given suites, run by Run after
// this project's cases of each suite when Options.Peers is set. Call it
// from an init function of the peer's package (imported by the command).
// Safe for concurrent use.
func RegisterPeer(name string, suites []string, fn PeerFunc) {
	peersMu.Lock()
	defer peersMu.Unlock()
	peers = append(peers, peer{name, slices.Clone(suites), fn})
}

// Peers returns the registered peer names by suite.
func Peers() map[string][]string {
	peersMu.Lock()
	defer peersMu.Unlock()
	m := map[string][]string{}
	for _, p := range peers {
		for _, s := range p.suites {
			m[s] = append(m[s], p.name)
		}
	}
	return m
}

func peersFor(suite string) []peer {
	peersMu.Lock()
	defer peersMu.Unlock()
	var out []peer
	for _, p := range peers {
		if slices.Contains(p.suites, suite) {
			out = append(out, p)
		}
	}
	return out
}

// Key is the canonical Config string of params: "k=v" pairs sorted by key,
// space-separated (numbers formatted with %v). Peers build the same string
// from the same params.
func Key(params map[string]any) string {
	keys := slices.Sorted(maps.Keys(params))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, params[k])
	}
	return strings.Join(parts, " ")
}

// Run sets up and measures the selected suites in order, then their peers,
// and returns the report (rows, skip reasons, environment, timing). A suite
// whose Setup or case fails is recorded in Report.Skipped with the error and
// the run goes on; only a bad Options or a cancelled ctx returns an error.
// Cases run rep-major (every case once, then again) so that a load change
// on the machine spreads over all cases instead of biasing one.
func Run(ctx context.Context, opts Options, all []Suite) (*Report, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	byName := map[string]Suite{}
	for _, s := range all {
		byName[s.Name] = s
	}
	for _, n := range opts.Suites {
		if _, ok := byName[n]; !ok {
			names := make([]string, len(all))
			for i, s := range all {
				names[i] = s.Name
			}
			return nil, fmt.Errorf("%w: unknown suite %q (have %s)", ErrConfig, n, strings.Join(names, ","))
		}
	}
	logw := opts.Progress
	if logw == nil {
		logw = io.Discard
	}
	rep := &Report{Env: CaptureEnv(), Options: opts, Started: time.Now().UTC()}
	rep.Options.Progress = nil
	start := time.Now()
	prog := newProgress(logw, opts.Suites)
	for si, name := range opts.Suites {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := byName[name]
		prog.suite(si, name)
		env := &Env{Options: opts, Log: prefixWriter(logw, name+": ")}
		t0 := time.Now()
		if s.Rows != nil {
			rows, err := s.Rows(ctx, env)
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.Rows = append(rep.Rows, rows...)
			if err != nil {
				rep.skip(name, "", err)
				fmt.Fprintf(logw, "bench: %s: %v\n", name, err)
			}
			rep.SuiteSeconds = append(rep.SuiteSeconds, SuiteTime{name, time.Since(t0).Seconds()})
			continue
		}
		cases, cleanup, err := s.Setup(ctx, env)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			rep.skip(name, "", err)
			fmt.Fprintf(logw, "bench: %s: %v\n", name, err)
			continue
		}
		var ps []peer
		if opts.Peers {
			ps = peersFor(name)
		}
		rounds, reps := 1, opts.Reps
		if opts.Interleave && len(ps) > 0 {
			rounds, reps = opts.Reps, 1
		}
		// release frees what Setup built once ours' last repetition is done,
		// before the peers' last (or only) call, so that a peer never runs
		// beside ours' index in memory when it need not (a 1M graph is GBs).
		release := func() {
			if cleanup != nil {
				cleanup()
				cleanup = nil
			}
		}
		cr := newCaseRows(name, cases)
		var peerRows []Row
		failedPeer := map[string]bool{}
		caseFailed := false
		for round := 0; round < rounds; round++ {
			rows, err := cr.run(ctx, reps, round, rounds*reps, prog)
			if round == rounds-1 || ctx.Err() != nil {
				release()
			}
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil && !caseFailed {
				caseFailed = true
				rep.skip(name, "", err)
				fmt.Fprintf(logw, "bench: %s: %v\n", name, err)
			}
			po := opts
			po.Reps = reps
			for _, p := range ps {
				if failedPeer[p.name] {
					continue
				}
				prog.note(fmt.Sprintf("%s: peer %s%s", name, p.name, roundNote(round, rounds)))
				prows, err := p.fn(ctx, name, PeerOptions{Options: po, Ours: slices.Clone(rows), Log: env.Log})
				if err != nil {
					if ctx.Err() != nil {
						release()
						return nil, ctx.Err()
					}
					failedPeer[p.name] = true
					rep.skip(name, p.name, err)
					fmt.Fprintf(logw, "bench: %s: peer %s: %v\n", name, p.name, err)
				}
				peerRows = joinReps(peerRows, prows)
			}
		}
		release()
		rep.Rows = append(rep.Rows, cr.measured()...)
		rep.Rows = append(rep.Rows, peerRows...)
		rep.SuiteSeconds = append(rep.SuiteSeconds, SuiteTime{name, time.Since(t0).Seconds()})
	}
	rep.Finished = time.Now().UTC()
	rep.WallSeconds = time.Since(start).Seconds()
	rep.Env.LoadAfter = loadAvg()
	return rep, nil
}

// caseRows holds the rows of one suite's cases while their repetitions
// run, possibly over several rounds (Options.Interleave).
type caseRows struct {
	suite  string
	cases  []Case
	rows   []Row
	failed []bool
	bad    error // a case without Config, Unit or Run
}

func newCaseRows(suite string, cases []Case) *caseRows {
	cr := &caseRows{suite: suite, cases: cases, rows: make([]Row, len(cases)), failed: make([]bool, len(cases))}
	for i, c := range cases {
		if c.Unit == "" || c.Config == "" || c.Run == nil {
			cr.bad = fmt.Errorf("bench: %s case %d: Config, Unit and Run are required", suite, i)
		}
		cr.rows[i] = Row{Suite: suite, System: Ours, Config: c.Config, Params: c.Params, Unit: c.Unit, Note: c.Note}
	}
	return cr
}

// run measures every case that has not failed reps times, rep-major, as
// repetitions round*reps+1.. of total (for the progress lines), and
// returns the rows measured so far; the error is the first case failure
// of this call.
func (cr *caseRows) run(ctx context.Context, reps, round, total int, prog *progress) ([]Row, error) {
	if cr.bad != nil {
		return nil, cr.bad
	}
	if round == 0 {
		prog.cases(len(cr.cases) * total)
	}
	var firstErr error
	for r := 0; r < reps; r++ {
		for i, c := range cr.cases {
			if cr.failed[i] {
				continue
			}
			prog.start(cr.suite, round*reps+r+1, total, c.Config)
			old := 0
			if c.Threads > 0 {
				old = runtime.GOMAXPROCS(c.Threads)
			}
			rp, err := c.Run(ctx)
			if old > 0 {
				runtime.GOMAXPROCS(old)
			}
			prog.done()
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				cr.failed[i] = true
				if firstErr == nil {
					firstErr = fmt.Errorf("case %q: %w", c.Config, err)
				}
				continue
			}
			cr.rows[i].Reps = append(cr.rows[i].Reps, rp)
		}
	}
	return cr.measured(), firstErr
}

// measured returns the rows with at least one repetition.
func (cr *caseRows) measured() []Row {
	var out []Row
	for _, r := range cr.rows {
		if len(r.Reps) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// joinReps adds rows to acc: a row whose suite, system and config are
// already there has its repetitions appended to that row's.
func joinReps(acc, rows []Row) []Row {
	for _, r := range rows {
		i := slices.IndexFunc(acc, func(a Row) bool { return a.Key() == r.Key() })
		if i < 0 {
			acc = append(acc, r)
			continue
		}
		acc[i].Reps = append(acc[i].Reps, r.Reps...)
	}
	return acc
}

// roundNote is " (round r/n)" for interleaved runs, "" otherwise.
func roundNote(round, rounds int) string {
	if rounds == 1 {
		return ""
	}
	return fmt.Sprintf(" (round %d/%d)", round+1, rounds)
}

// progress prints one stderr line per repetition: suite, rep, case, ETA.
type progress struct {
	w         io.Writer
	suites    []string
	si        int
	total     int // case-reps of the current suite
	doneN     int
	t0, tcase time.Time
	runStart  time.Time
}

func newProgress(w io.Writer, suites []string) *progress {
	return &progress{w: w, suites: suites, runStart: time.Now()}
}

func (p *progress) suite(i int, name string) {
	p.si = i
	fmt.Fprintf(p.w, "bench: [%d/%d] %s: setting up (%s elapsed)\n", i+1, len(p.suites), name, time.Since(p.runStart).Round(time.Second))
}

func (p *progress) cases(n int) { p.total, p.doneN, p.t0 = n, 0, time.Now() }

func (p *progress) note(s string) { fmt.Fprintf(p.w, "bench: %s\n", s) }

func (p *progress) start(suite string, rep, reps int, config string) {
	eta := "?"
	if p.doneN > 0 {
		per := time.Since(p.t0) / time.Duration(p.doneN)
		eta = (per * time.Duration(p.total-p.doneN)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "bench: [%d/%d] %s rep %d/%d  %d/%d  suite ETA %s  %s\n",
		p.si+1, len(p.suites), suite, rep, reps, p.doneN+1, p.total, eta, config)
}

func (p *progress) done() { p.doneN++ }

// prefixWriter prefixes every line written with "bench: "+prefix; lines may
// arrive in pieces (a child process's output). Safe for concurrent use.
func prefixWriter(w io.Writer, prefix string) io.Writer {
	var mu sync.Mutex
	atStart := true
	return writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		var out []byte
		for rest := b; len(rest) > 0; {
			if atStart {
				out = append(out, "bench: "+prefix...)
			}
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				out, atStart = append(out, rest...), false
				break
			}
			out, atStart, rest = append(out, rest[:i+1]...), true, rest[i+1:]
		}
		if _, err := w.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// SuiteNames lists the names of suites, in order.
func SuiteNames(all []Suite) []string {
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}
