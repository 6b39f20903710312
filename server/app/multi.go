package app

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/procstat"
	"github.com/rlsearch/rlsearch/server"
)

// DefaultCorpus is the name of a corpus given without one (serve --index
// DIR).
const DefaultCorpus = "default"

// Corpus is one named index of a multi-corpus service (serve --index
// NAME=DIR).
type Corpus struct {
	Name string // "" means DefaultCorpus
	Dir  string
}

// Multi is a service over several corpora in one process: one Service per
// corpus (its index, e5 batching queue, result cache, program runtime and
// endpoints), with the query encoder, the reranker, the policy tokenizer
// and the hybrid collections opened once and shared, and the routing over
// them (server.Corpora: /c/NAME/..., the listeners' corpora, "corpus" in
// program and reward bodies). Safe for concurrent use; Close once.
type Multi struct {
	Corpora  *server.Corpora
	Services []*Service // in the order given; [0] is the default corpus
	closers  []func()
}

// Close releases everything, in reverse order.
func (m *Multi) Close() {
	for i := len(m.Services) - 1; i >= 0; i-- {
		m.Services[i].Close()
	}
	for i := len(m.closers) - 1; i >= 0; i-- {
		m.closers[i]()
	}
	m.Services, m.closers = nil, nil
}

// NewMulti assembles one Service per corpus of corpora with cfg (whose
// Index gives the model and open options, its Dir unused), sharing the
// models. A corpus whose index has a vector file serves e5 with the
// shared encoder; one without serves BM25 only (with a warning when
// --model is set). The first corpus keeps cfg.UI (the inspector's dumps
// load once); the others mount the inspector without dumps. Each corpus
// has its own /metrics registry (cfg.Server.Registry, if set, goes to the
// first) and its own result cache of cfg.CacheBytes. Start-up time and
// the process's memory once it opened (startMemory) are logged per corpus
// and reported in its /healthz "corpus".
// Errors: ErrConfig for bad names, else those of New.
func NewMulti(ctx context.Context, cfg Config, corpora []Corpus) (_ *Multi, err error) {
	m := &Multi{}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	if len(corpora) == 0 {
		return nil, fmt.Errorf("%w: --index is required", ErrConfig)
	}
	logger := cmp.Or(cfg.Logger, slog.Default())
	names := make([]string, len(corpora))
	for i, c := range corpora {
		names[i] = cmp.Or(c.Name, DefaultCorpus)
	}
	if cfg.Index.BM25Parallel < 0 {
		return nil, fmt.Errorf("%w: --bm25-parallel %d: want >= 0", ErrConfig, cfg.Index.BM25Parallel)
	}
	enc, _, closeEnc, err := OpenEncoder(cfg.Index.Model)
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, closeEnc)
	sh, closeShared, err := openShared(ctx, cfg, enc, logger)
	if err != nil {
		return nil, err
	}
	m.closers = append(m.closers, closeShared)
	servers := make([]*server.Server, len(corpora))
	for i, c := range corpora {
		svc, err := openCorpus(ctx, cfg, i, names, c.Dir, enc, sh, logger)
		if err != nil {
			return nil, fmt.Errorf("corpus %s (%s): %w", names[i], c.Dir, err)
		}
		m.Services = append(m.Services, svc)
		servers[i] = svc.Server
	}
	if m.Corpora, err = server.NewCorpora(names, servers); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return m, nil
}

// openCorpus opens corpus i's index (with enc when it has a vector file)
// and builds its service, measuring what the corpus costs to start.
func openCorpus(ctx context.Context, cfg Config, i int, names []string, dir string, enc rlsearch.Encoder, sh *shared, logger *slog.Logger) (*Service, error) {
	start := time.Now()
	useEnc := enc
	if enc != nil && !hasVectorFile(dir) {
		logger.Warn("corpus has no vector file (dense.shard): served with BM25 only", "corpus", names[i], "index", dir)
		useEnc = nil
	}
	ix, err := index.Open(ctx, dir, cfg.Index.openConfig(useEnc))
	if err != nil {
		return nil, err
	}
	svc := &Service{Index: ix, closers: []func(){func() { ix.Close() }}}
	c := cfg
	c.Index.Dir = dir
	if i > 0 {
		c.UI = UIConfig{}
		c.Server.Registry = nil
	}
	info := map[string]any{"name": names[i], "corpora": names}
	c.corpus = info
	if err := svc.serveIndex(ctx, c, sh); err != nil {
		svc.Close()
		return nil, err
	}
	mem := readStartMemory()
	info["start_seconds"] = time.Since(start).Seconds()
	info["open_seconds"] = ix.OpenDuration.Seconds()
	info["rss_bytes_at_start"] = mem.RSS
	info["peak_rss_bytes_at_start"] = mem.PeakRSS
	info["heap_bytes_at_start"] = mem.Heap
	logger.Info("corpus loaded", "corpus", names[i], "index", dir, "passages", ix.Len(), "retrievers", ix.RetrieverNames(),
		"start_seconds", info["start_seconds"], "open_seconds", info["open_seconds"], "rss_bytes", mem.RSS, "peak_rss_bytes", mem.PeakRSS, "heap_bytes", mem.Heap)
	return svc, nil
}

// startMemory is the process's memory once a corpus has opened, for the
// "corpus loaded" log line (rss_bytes, peak_rss_bytes, heap_bytes) and
// /healthz "corpus" (the same with the suffix _at_start). Every figure is
// of the whole process at that moment, so it includes the models and the
// corpora opened before, and none is negative. They replaced differences
// over the corpus's start (issue 37), which went negative when the open
// freed more than it kept: --hnsw-compressed reads the float vectors,
// compresses them and releases them, and the Go runtime returns the
// garbage to the OS. An open's transient shows in PeakRSS; what a corpus
// keeps, roughly, in the rss_bytes of successive corpora.
type startMemory struct {
	RSS     int64 // resident set size (/proc/self/status VmRSS), bytes; 0 when unreadable (not Linux)
	PeakRSS int64 // the process's peak resident set size so far (VmHWM), bytes; 0 when unreadable
	Heap    int64 // the Go heap's allocated bytes (runtime.MemStats.HeapAlloc: live objects and garbage not yet swept)
}

// readStartMemory reads startMemory now.
func readStartMemory() startMemory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := procstat.RSS(0)
	peak, _ := procstat.Bytes(0, "VmHWM") // read after VmRSS, so never below it
	return startMemory{RSS: rss, PeakRSS: peak, Heap: int64(ms.HeapAlloc)}
}

// hasVectorFile reports whether the index in dir has a vector file (its
// meta.json names one); an unreadable meta.json says yes, so that
// index.Open reports the real error.
func hasVectorFile(dir string) bool {
	raw, err := os.ReadFile(filepath.Join(dir, index.MetaFile))
	if err != nil {
		return true
	}
	var meta index.Meta
	if json.Unmarshal(raw, &meta) != nil {
		return true
	}
	return meta.Dense != nil
}
