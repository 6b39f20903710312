package ann

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/rlsearch/rlsearch"
)

// Index is what every vector index in this package offers: Flat, HNSW and
// GPUFlat. Search takes row-major [nq, Dim()] float32 queries and returns,
// per query, up to k hits by descending inner product, ties by ascending
// row; implementations are safe for concurrent Search.
type Index interface {
	Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error)
	Len() int
	Dim() int
}

// Backends accepted by Config.Backend.
const (
	BackendAuto = "auto"
	BackendFlat = "flat"
	BackendHNSW = "hnsw"
	BackendGPU  = "gpu"
)

// DefaultFlatMax is the corpus size up to which "auto" uses exact flat
// search on CPU: 500,000 vectors. Measured on 2 cores (AVX-512 kernel),
// exact flat answers ~2,500 queries/s at 100k × 384 fp32, batch 64, so about
// 250/s at 500k × 768 — the point where HNSW becomes the better default.
const DefaultFlatMax = 500_000

// ErrGPUUnavailable is returned by Open when Backend is "gpu" and no GPU
// index can be made (wrapping the cause, such as cuda.ErrNoDevice).
var ErrGPUUnavailable = errors.New("ann: GPU backend unavailable")

// Config selects and opens a vector index over one shard. Zero fields
// take the defaults named on each.
type Config struct {
	// Path is the shard file. Either Path or Flat is required.
	Path string
	// Flat is an already loaded shard (used instead of reading Path).
	Flat *Flat
	// Backend is "auto" (default), "flat", "hnsw" or "gpu". "auto" tries the
	// GPU, then uses HNSW above FlatMax vectors and exact flat below; "gpu"
	// fails with ErrGPUUnavailable instead of falling back.
	Backend string
	// FlatMax is the largest corpus "auto" serves with exact flat search.
	// Default DefaultFlatMax.
	FlatMax int
	// HNSW configures the graph when one is built.
	HNSW HNSWConfig
	// HNSWPath, when set, is a graph saved by (*HNSW).Save: loaded when the
	// file exists (its vector count must equal the shard's), otherwise
	// built and saved there.
	HNSWPath string
	// GPU configures the GPU backend.
	GPU GPUConfig
	// Logf receives the choice and its reason. Default: none.
	Logf func(format string, args ...any)
}

// Validate names the first bad field.
func (c Config) Validate() error {
	switch c.Backend {
	case "", BackendAuto, BackendFlat, BackendHNSW, BackendGPU:
	default:
		return fmt.Errorf("ann: Config.Backend: %q is not auto, flat, hnsw or gpu", c.Backend)
	}
	switch {
	case c.Path == "" && c.Flat == nil:
		return errors.New("ann: Config.Path: a shard path (or Config.Flat) is required")
	case c.FlatMax < 0:
		return fmt.Errorf("ann: Config.FlatMax: %d must be ≥ 0", c.FlatMax)
	}
	if err := c.HNSW.Validate(); err != nil {
		return err
	}
	return c.GPU.Validate()
}

// Opened is the index Open chose. Close releases GPU memory when the
// backend is "gpu" (a no-op otherwise).
type Opened struct {
	Index
	// Backend is "flat", "hnsw" or "gpu": what /healthz reports.
	Backend string
	// Reason says why (for logs and /healthz).
	Reason string
	// Flat is the shard in host memory (the exact oracle).
	Flat *Flat
}

// Close releases the backend's resources.
func (o *Opened) Close() error {
	if c, ok := o.Index.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Open reads the shard and chooses the backend: the only code path that
// does (STYLE.md). It logs its choice through cfg.Logf. Errors:
// cfg.Validate(), shard errors (ErrCorrupt), ErrGPUUnavailable for an
// explicit "gpu" without a usable GPU, HNSW build/load errors, ctx.Err().
func Open(ctx context.Context, cfg Config) (*Opened, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	flat := cfg.Flat
	if flat == nil {
		var err error
		if flat, err = ReadShard(cfg.Path); err != nil {
			return nil, err
		}
	}
	flatMax := cfg.FlatMax
	if flatMax == 0 {
		flatMax = DefaultFlatMax
	}
	backend := cfg.Backend
	if backend == "" {
		backend = BackendAuto
	}
	o := &Opened{Flat: flat}
	switch backend {
	case BackendGPU, BackendAuto:
		g, err := openGPU(flat, cfg.GPU)
		if err == nil {
			o.Index, o.Backend, o.Reason = g, BackendGPU, fmt.Sprintf("GPU exact flat over %d vectors", flat.Len())
			break
		}
		if backend == BackendGPU {
			return nil, fmt.Errorf("%w: %w", ErrGPUUnavailable, err)
		}
		logf("ann: no GPU backend (%v)", err)
		if flat.Len() <= flatMax {
			o.Index, o.Backend = flat, BackendFlat
			o.Reason = fmt.Sprintf("no GPU; %d vectors ≤ FlatMax %d: exact flat on CPU (%s kernel)", flat.Len(), flatMax, KernelName())
			break
		}
		h, err := openHNSW(ctx, flat, cfg)
		if err != nil {
			return nil, err
		}
		o.Index, o.Backend = h, BackendHNSW
		o.Reason = fmt.Sprintf("no GPU; %d vectors > FlatMax %d: HNSW (M=%d, efSearch=%d)", flat.Len(), flatMax, h.cfg.M, h.cfg.EfSearch)
	case BackendFlat:
		o.Index, o.Backend, o.Reason = flat, BackendFlat, fmt.Sprintf("configured: exact flat on CPU (%s kernel)", KernelName())
	case BackendHNSW:
		h, err := openHNSW(ctx, flat, cfg)
		if err != nil {
			return nil, err
		}
		o.Index, o.Backend = h, BackendHNSW
		o.Reason = fmt.Sprintf("configured: HNSW (M=%d, efSearch=%d)", h.cfg.M, h.cfg.EfSearch)
	}
	logf("ann: backend %s: %s", o.Backend, o.Reason)
	return o, nil
}

// openHNSW loads the saved graph at cfg.HNSWPath, or builds one over the
// shard's vectors (and saves it there when a path is set).
func openHNSW(ctx context.Context, flat *Flat, cfg Config) (*HNSW, error) {
	if cfg.HNSWPath != "" {
		if _, err := os.Stat(cfg.HNSWPath); err == nil {
			h, err := LoadHNSW(cfg.HNSWPath)
			if err != nil {
				return nil, err
			}
			if h.Len() != flat.Len() || h.Dim() != flat.Dim() {
				return nil, fmt.Errorf("ann: graph %s has %d × %d vectors, shard %d × %d: delete it to rebuild", cfg.HNSWPath, h.Len(), h.Dim(), flat.Len(), flat.Dim())
			}
			if cfg.HNSW.EfSearch > 0 {
				h.SetEfSearch(cfg.HNSW.EfSearch)
			}
			return h, nil
		}
	}
	h, err := NewHNSW(ctx, flat.Vectors(0, flat.Len()), flat.Dim(), cfg.HNSW)
	if err != nil {
		return nil, err
	}
	if cfg.HNSWPath != "" {
		if err := h.Save(cfg.HNSWPath, false); err != nil {
			return nil, err
		}
	}
	return h, nil
}
