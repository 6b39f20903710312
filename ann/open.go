package ann

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"strings"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/internal/canary"
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
	// GPU, then uses exact flat up to FlatMax vectors and HNSW above, as far
	// as available memory allows (see Open); "gpu" fails with
	// ErrGPUUnavailable instead of falling back.
	Backend string
	// FlatMax is the largest corpus "auto" serves with exact flat search.
	// Default DefaultFlatMax.
	FlatMax int
	// HNSW configures the graph when one is built. EfSearch and Int8 also
	// apply to a loaded graph: Int8 traverses it on int8 codes fitted over
	// the shard at every open (HNSW.TraverseInt8: Dim bytes per vector more,
	// counted by "auto"'s estimate) and re-ranks the EfSearch candidates on
	// the shard's own rows; the saved graph holds no codes either way.
	// HNSWCompressed ignores it (it traverses on codes already).
	HNSW HNSWConfig
	// HNSWPath, when set, is a graph saved by (*HNSW).Save: loaded when the
	// file exists (its vector count must equal the shard's), otherwise
	// built and saved there.
	HNSWPath string
	// HNSWCompressed serves the graph compressed whenever the backend is
	// HNSW ("hnsw", or "auto" choosing it; "flat" and "gpu" ignore it):
	// traversal on int8 codes, the final candidates re-ranked on the fp16
	// rows file FP16RowsPath, memory-mapped read-only ((*HNSW).Compress:
	// written atomically when absent, reused when it holds this shard's
	// vectors, refused with ErrStaleRows or ErrCorrupt otherwise). The
	// graph is built (or loaded from HNSWPath) as without it, so the saved
	// graph serves both ways. After Open, Opened.Flat is exact flat search
	// over the mapped fp16 rows and the shard's own storage is released:
	// resident memory is the codes and the graph (Dim + ~4·(2M+1) + 8 bytes
	// per vector; ann/README.md). With Backend "hnsw" and a graph saved at
	// HNSWPath, the shard is streamed block by block instead of read
	// (the graph loaded without vectors; one to three reads of the shard),
	// so the shard never needs to fit in memory; the result is the same.
	HNSWCompressed bool
	// FlatInt8Scan serves exact flat search (Backend "flat", or "auto"
	// choosing it; "hnsw" and "gpu" ignore it) through (*Flat).Int8Scan:
	// each query scans int8 codes of the vector file for its top k +
	// DefaultRerankExtra rows and re-ranks those on the file's own fp32 or
	// fp16 rows (answers equal exact search whenever the true top k are
	// among the candidates: recall@10 1.0 measured on bge-base, SIFT and
	// Fashion-MNIST). It costs Int8ScanMemory bytes (Dim rounded up to 32
	// per vector) beside the vector file: when "auto" finds that they do not
	// fit in Memory's available bytes it serves the plain exact scan and says
	// so in Opened.Reason; an explicit "flat" builds the codes anyway with a
	// warning. An int8 vector file is refused with rlsearch.ErrBadInput.
	// Opened.Flat stays exact search over the file.
	FlatInt8Scan bool
	// FP16RowsPath is the compressed graph's fp16 rows file. Default:
	// Path + ".f16" (required when Path is empty).
	FP16RowsPath string
	// GPU configures the GPU backend. With GPU.Int8 under "gpu" or
	// "auto", a shard that is not int8 (or whose Dim is not a multiple of
	// 16) is refused with rlsearch.ErrBadInput before anything goes to a
	// GPU (for a streamable shard, from its header before it is read),
	// with or without a GPU; "flat" and "hnsw" ignore GPU.
	GPU GPUConfig
	// SkipGPUCanary turns the GPU search canary off (rlsearch
	// --gpu-canary=false): by default, before "auto" or "gpu" serves
	// search from the GPU, GPUFlat.Canary compares a fixed sample with the
	// CPU exact search; on a mismatch "auto" serves on the CPU (one log
	// line, the reason in Opened.Canary and Reason) and "gpu" fails with
	// an error wrapping ErrGPUCanary that names the first differing query.
	SkipGPUCanary bool
	// Logf receives the choice and its reason. Default: none, except the
	// line of a failed search canary under "auto", which goes to
	// log.Printf when Logf is nil (it must not be lost).
	Logf func(format string, args ...any)
	// Memory reports the memory still available to the process; "auto"
	// chooses a backend whose estimated resident need (EstimateMemory)
	// fits. Default SystemMemory. When it returns an error, the choice
	// follows the vector count alone (and the reason says so).
	Memory func() (MemInfo, error)
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
		return errors.New("ann: Config.Path: a vector file path (or Config.Flat) is required")
	case c.FlatMax < 0:
		return fmt.Errorf("ann: Config.FlatMax: %d must be ≥ 0", c.FlatMax)
	case c.HNSWCompressed && c.FP16RowsPath == "" && c.Path == "":
		return errors.New("ann: Config.FP16RowsPath: HNSWCompressed over an in-memory vector file (Config.Flat) needs a path for its fp16 rows file")
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
	// Canary is the GPU search canary's report (GPUFlat.Canary): Ran
	// false when no GPU index was made or the canary was skipped
	// (Skipped says why); Failure names the first differing query when
	// "auto" fell back to the CPU because of it. /healthz reports it as
	// dense.canary.
	Canary canary.Report
}

// Close releases the backend's resources.
func (o *Opened) Close() error {
	if c, ok := o.Index.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Open reads the shard and chooses the backend: the only code path that
// does (STYLE.md). It logs its choice through cfg.Logf.
//
// "auto" uses the GPU when one is usable. Otherwise it estimates each CPU
// backend's resident memory for this shard (EstimateMemory) against what
// cfg.Memory reports available (plus the shard's own bytes when cfg.Flat
// is already loaded): exact flat up to FlatMax vectors; above, HNSW when
// its need (shard + graph + codes + the float32 copy of a build) fits,
// else exact flat (slower, but it fits). Every backend keeps the shard in
// host memory, so when even the shard does not fit Open refuses before
// reading it, with ErrNoMemory naming the need, what is available, and the
// storage types that would fit. Reason states the choice with its numbers.
//
// Errors: cfg.Validate(), shard errors (ErrCorrupt), ErrGPUUnavailable for
// an explicit "gpu" without a usable GPU, ErrNoMemory, HNSW build/load
// errors, ctx.Err().
func Open(ctx context.Context, cfg Config) (*Opened, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	backend := cfg.Backend
	if backend == "" {
		backend = BackendAuto
	}
	memFn := cfg.Memory
	if memFn == nil {
		memFn = SystemMemory
	}
	mem, memErr := memFn()
	if memErr != nil {
		logf("ann: memory unknown (%v): choosing by vector count only", memErr)
	}
	flat := cfg.Flat
	var n, dim int
	var dt DType
	var held int64 // bytes of the shard already resident (cfg.Flat)
	var sh Header  // the streamable shard's header
	if flat != nil {
		n, dim, dt = flat.Len(), flat.Dim(), flat.h.DType
		held = EstimateMemory(n, dim, dt, BackendFlat, cfg.HNSW, false).Vectors
	} else if sr, err := OpenVectorFileReader(cfg.Path); err == nil {
		h := sr.Header()
		sr.Close()
		sh = h
		n, dim, dt = h.Count, h.Dim, h.DType
		if err := gpuInt8Check(cfg, backend, h); err != nil { // before reading the shard
			return nil, err
		}
	} else {
		n = -1 // version 1 or unreadable: ReadVectorFile below says why
	}
	if flat == nil && n >= 0 && backend == BackendHNSW && cfg.HNSWCompressed && graphExists(cfg.HNSWPath) {
		// The shard is streamed, never held: a compressed graph needs only
		// its graph and codes in memory.
		o, err := openCompressedStream(ctx, cfg, sh)
		if err != nil {
			return nil, err
		}
		logf("ann: backend %s: %s", o.Backend, o.Reason)
		return o, nil
	}
	avail := mem.Available + held
	if memErr == nil && n >= 0 && flat == nil {
		if need := EstimateMemory(n, dim, dt, BackendFlat, cfg.HNSW, false).Vectors; need > avail {
			return nil, fmt.Errorf("%w: %s", ErrNoMemory, noFit(n, dim, dt, need, mem))
		}
	}
	if flat == nil {
		var err error
		if flat, err = ReadVectorFile(cfg.Path); err != nil {
			return nil, err
		}
		n, dim, dt = flat.Len(), flat.Dim(), flat.h.DType
	}
	if err := gpuInt8Check(cfg, backend, flat.h); err != nil {
		return nil, err
	}
	flatMax := cfg.FlatMax
	if flatMax == 0 {
		flatMax = DefaultFlatMax
	}
	shardNeed := EstimateMemory(n, dim, dt, BackendFlat, cfg.HNSW, false)
	hnswNeed := EstimateMemory(n, dim, dt, BackendHNSW, savedGraphConfig(cfg.HNSWPath, cfg.HNSW), !graphExists(cfg.HNSWPath))
	memNote := func(need MemoryNeed) string {
		if memErr != nil {
			return "memory unknown"
		}
		return fmt.Sprintf("needs %s of %s available", GiB(need.Total()), GiB(avail))
	}
	o := &Opened{Flat: flat, Canary: canary.Report{What: "search canary"}}
	noGPU := "no GPU" // why "auto" is on the CPU, in Reason
	switch backend {
	case BackendGPU, BackendAuto:
		g, err := openGPU(flat, cfg.GPU)
		if err == nil {
			o.Canary, err = gpuCanary(ctx, g, flat, cfg)
			if err != nil {
				if c, ok := g.(interface{ Close() error }); ok {
					c.Close()
				}
				if backend == BackendGPU || ctx.Err() != nil {
					return nil, err
				}
				if !errors.Is(err, ErrGPUCanary) {
					logf("ann: GPU search canary could not run (%v): using the CPU", err)
				} else {
					loud := cfg.Logf
					if loud == nil {
						loud = log.Printf
					}
					loud("ann: GPU SEARCH CANARY FAILED, NOT SERVING SEARCH FROM THE GPU: %s; using the CPU (GPU path %s vs %s)", o.Canary.Failure, o.Canary.Path, o.Canary.Reference)
				}
				noGPU = "GPU search canary failed (" + cmpOr(o.Canary.Failure, err.Error()) + ")"
			}
		}
		if err == nil {
			o.Index, o.Backend, o.Reason = g, BackendGPU, fmt.Sprintf("GPU exact flat over %d vectors", flat.Len())
			if gp, ok := g.(*GPUFlat); ok {
				o.Reason += "; " + gp.Paths() // the pipeline per batch size (gpu_scan.go)
			}
			o.Reason += "; " + o.Canary.String()
			break
		}
		if backend == BackendGPU {
			return nil, fmt.Errorf("%w: %w", ErrGPUUnavailable, err)
		}
		if noGPU == "no GPU" {
			logf("ann: no GPU backend (%v)", err)
		}
		if n <= flatMax {
			o.Index, o.Backend = flat, BackendFlat
			o.Reason = fmt.Sprintf("%s; %d vectors ≤ FlatMax %d: exact flat on CPU (%s kernel; %s %d-d, %s)", noGPU, n, flatMax, KernelName(), dt, dim, memNote(shardNeed))
			break
		}
		if memErr == nil && hnswNeed.Total() > avail {
			o.Index, o.Backend = flat, BackendFlat
			o.Reason = fmt.Sprintf("%s; %d vectors > FlatMax %d but HNSW would need %s (vector file %s + graph %s + codes %s + build copy %s) of %s available (%s): exact flat on CPU (%s kernel, needs %s; slower than HNSW)",
				noGPU, n, flatMax, GiB(hnswNeed.Total()), GiB(hnswNeed.Vectors), GiB(hnswNeed.Graph), GiB(hnswNeed.Codes), GiB(hnswNeed.Build), GiB(avail), mem.Source, KernelName(), GiB(shardNeed.Total()))
			break
		}
		h, note, err := openHNSW(ctx, flat, cfg)
		if err != nil {
			return nil, err
		}
		o.Index, o.Backend = h, BackendHNSW
		o.Reason = fmt.Sprintf("%s; %d vectors > FlatMax %d: HNSW (M=%d, efSearch=%d, int8 traversal %v%s; %s)", noGPU, n, flatMax, h.cfg.M, h.cfg.EfSearch, h.codes != nil, note, memNote(hnswNeed))
	case BackendFlat:
		o.Index, o.Backend, o.Reason = flat, BackendFlat, fmt.Sprintf("configured: exact flat on CPU (%s kernel; %s)", KernelName(), memNote(shardNeed))
	case BackendHNSW:
		if memErr == nil && hnswNeed.Total() > avail {
			logf("ann: warning: HNSW was configured but needs an estimated %s of %s available (%s)", GiB(hnswNeed.Total()), GiB(avail), mem.Source)
		}
		h, note, err := openHNSW(ctx, flat, cfg)
		if err != nil {
			return nil, err
		}
		o.Index, o.Backend = h, BackendHNSW
		o.Reason = fmt.Sprintf("configured: HNSW (M=%d, efSearch=%d, int8 traversal %v%s; %s)", h.cfg.M, h.cfg.EfSearch, h.codes != nil, note, memNote(hnswNeed))
	}
	if f, ok := o.Index.(*Flat); ok && cfg.FlatInt8Scan {
		codes := Int8ScanMemory(n, dim)
		short := memErr == nil && shardNeed.Total()+codes > avail
		over := fmt.Sprintf("its codes need %s beyond the vector file's %s, of %s available (%s)", GiB(codes), GiB(shardNeed.Total()), GiB(avail), mem.Source)
		switch {
		case short && backend == BackendAuto && dt != INT8:
			// auto never overcommits: the exact flat scan it serves
			// instead needs no codes (Search is exact either way).
			o.Reason += "; int8 scan not built: " + over
		default:
			if short && dt != INT8 {
				logf("ann: warning: the int8 scan was configured but %s", over)
			}
			s, err := f.Int8Scan(0)
			if err != nil {
				return nil, err
			}
			o.Index = s
			o.Reason += fmt.Sprintf("; int8 scan (+%s of codes), top k+%d re-ranked on the %s rows", GiB(codes), DefaultRerankExtra, dt)
		}
	}
	if h, ok := o.Index.(*HNSW); ok && h.Compressed() {
		// Exact search and Vector now read the mapped rows; the shard's
		// storage (and the build's float32 copy) can go.
		o.Flat = h.rr.flat(flat.h, flat.ids)
		flat = nil
		debug.FreeOSMemory()
	}
	logf("ann: backend %s: %s", o.Backend, o.Reason)
	return o, nil
}

// noFit explains that the shard does not fit and which storage would.
func noFit(n, dim int, dt DType, need int64, mem MemInfo) string {
	msg := fmt.Sprintf("%d × %d %s vectors need %s resident (every CPU and GPU backend keeps them in host memory) but %s is available (%s)", n, dim, dt, GiB(need), GiB(mem.Available), mem.Source)
	var fits []string
	for _, alt := range []DType{FP16, INT8} {
		if alt.size() < dt.size() {
			if b := int64(n) * int64(dim) * int64(alt.size()); b <= mem.Available {
				fits = append(fits, fmt.Sprintf("%s (%s)", alt, GiB(b)))
			}
		}
	}
	if len(fits) > 0 {
		return msg + "; rebuild the shard as " + strings.Join(fits, " or ") + " (rlsearch index --dtype), or serve it from a machine with more memory or a GPU"
	}
	return msg + "; no storage type fits: shard the corpus over several machines, or use a machine with more memory or a GPU"
}

// savedGraphConfig is c with M taken from the graph saved at path, when
// there is one (an imported faiss graph has its own M, such as Search-R1's
// 64), so that its memory is estimated for what will be loaded.
func savedGraphConfig(path string, c HNSWConfig) HNSWConfig {
	if path == "" {
		return c
	}
	f, err := os.Open(path)
	if err != nil {
		return c
	}
	defer f.Close()
	var b [16]byte
	if _, err := io.ReadFull(f, b[:]); err == nil && string(b[:8]) == hnswMagic {
		if m := int(binary.LittleEndian.Uint32(b[12:])); m >= 2 && m <= 256 {
			c.M = m
		}
	}
	return c
}

func graphExists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

// openHNSW loads the saved graph at cfg.HNSWPath, or builds one over the
// shard's vectors (and saves it there when a path is set); with
// cfg.HNSWCompressed it then compresses it (HNSW.Compress). note is a
// clause for Reason ("" when not compressed).
func openHNSW(ctx context.Context, flat *Flat, cfg Config) (h *HNSW, note string, err error) {
	if cfg.HNSWPath != "" {
		if _, err := os.Stat(cfg.HNSWPath); err == nil {
			h, err := LoadHNSWShared(cfg.HNSWPath, flat)
			if err != nil {
				return nil, "", err
			}
			if h.Len() != flat.Len() || h.Dim() != flat.Dim() {
				return nil, "", fmt.Errorf("ann: graph %s has %d × %d vectors, vector file %d × %d: delete it to rebuild", cfg.HNSWPath, h.Len(), h.Dim(), flat.Len(), flat.Dim())
			}
			if cfg.HNSW.EfSearch > 0 {
				h.SetEfSearch(cfg.HNSW.EfSearch)
			}
			if err := traverseInt8(h, cfg); err != nil {
				return nil, "", err
			}
			note, err := compressHNSW(h, cfg)
			if err != nil {
				return nil, "", err
			}
			return h, note, nil
		}
	}
	// The graph is built over a float32 copy it owns, saved, then made to
	// read the shard's storage instead (ShareVectors), which drops the copy;
	// compressed, it then reads its codes and fp16 rows (and drops the shard).
	// Built without codes even when cfg.HNSW.Int8 asks for int8
	// traversal: the saved graph stays the same file either way, and the
	// codes are fitted at every open (traverseInt8).
	bcfg := cfg.HNSW
	bcfg.Int8 = false
	h, err = newHNSW(ctx, flat.Vectors(0, flat.Len()), flat.Dim(), bcfg, true)
	if err != nil {
		return nil, "", err
	}
	if cfg.HNSWPath != "" {
		if err := h.Save(cfg.HNSWPath, false); err != nil {
			return nil, "", err
		}
	}
	if err := h.ShareVectors(flat); err != nil {
		return nil, "", err
	}
	if err := traverseInt8(h, cfg); err != nil {
		return nil, "", err
	}
	// Compressed, the codes are an int8 shard's own or fitted over the
	// shard's values, as the streamed open (openCompressedStream) does.
	note, err = compressHNSW(h, cfg)
	if err != nil {
		return nil, "", err
	}
	return h, note, nil
}

// traverseInt8 gives h int8 traversal codes over its shard when cfg asks
// for them (Config.HNSW.Int8) and does not compress it (Compress fits its
// own).
func traverseInt8(h *HNSW, cfg Config) error {
	if !cfg.HNSW.Int8 || cfg.HNSWCompressed {
		return nil
	}
	return h.TraverseInt8()
}

// compressHNSW compresses h when cfg asks for it (Config.HNSWCompressed).
func compressHNSW(h *HNSW, cfg Config) (string, error) {
	if !cfg.HNSWCompressed {
		return "", nil
	}
	path := cfg.FP16RowsPath
	if path == "" {
		path = cfg.Path + ".f16"
	}
	reused, err := h.Compress(path)
	if err != nil {
		return "", err
	}
	how := "written"
	if reused {
		how = "reused"
	}
	return fmt.Sprintf(", compressed: fp16 re-rank from %s (%s, memory-mapped)", path, how), nil
}

// gpuInt8Check refuses Config.GPU.Int8 for a shard the int8 GPU kernels
// cannot hold when the GPU may be chosen ("gpu", "auto"), whether or not
// a GPU is present, so that the same flags fail the same way on every
// machine instead of "auto" falling back to the CPU only where there is a
// GPU.
func gpuInt8Check(cfg Config, backend string, h Header) error {
	if !cfg.GPU.Int8 || (backend != BackendGPU && backend != BackendAuto) {
		return nil
	}
	if err := int8Usable(h); err != nil {
		return fmt.Errorf("%w (rebuild the vector file with rlsearch index --dtype int8, or leave the int8 GPU storage off)", err)
	}
	return nil
}

// gpuCanary runs the search canary on a GPU index made by openGPU, unless
// cfg.SkipGPUCanary. The error wraps ErrGPUCanary on a mismatch.
func gpuCanary(ctx context.Context, g Index, flat *Flat, cfg Config) (canary.Report, error) {
	if cfg.SkipGPUCanary {
		return canary.Report{What: "search canary", Skipped: "turned off: Config.SkipGPUCanary (--gpu-canary=false)"}, nil
	}
	gp, ok := g.(*GPUFlat)
	if !ok {
		return canary.Report{What: "search canary", Skipped: "not a GPUFlat"}, nil
	}
	rep, err := gp.Canary(ctx, flat.Vectors)
	if err != nil {
		return rep, err
	}
	if cfg.Logf != nil {
		cfg.Logf("ann: %s", rep)
	}
	return rep, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
