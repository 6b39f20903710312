// Command gpubench is our side of bench/gpu/run.sh's GPU benchmark: a
// process that holds a GPU index over generated vectors and answers timing
// commands, one JSON object per line on stdin, one JSON answer per line on
// stdout, so that bench/gpu/interleave.py can alternate it with PyTorch
// (torch_baseline.py --serve) repetition by repetition while both keep
// their corpus resident. Logs go to stderr.
//
// Commands (fields beyond "op" are optional, defaults in parentheses):
//
//	{"op": "copy", "mib": 4096, "reps": 10}
//	    device-to-device copy bandwidth: median over reps of (read + written
//	    bytes) / time, timed with CUDA events; GB/s
//	{"op": "load", "n": N, "dim": 768, "seed": 1, "int8": false}
//	    generate N unit vectors (rows seeded by index; the first rows of a
//	    larger N are the same) and build the index: ann.NewGPUStream, or
//	    ann.Flat with -cpu; with "int8", also a second index of N int8
//	    rows (Int8Rows, Int8Header) under ann.GPUConfig.Int8, timed as
//	    path "int8"
//	{"op": "calibrate", "batch": B, "k": 10, "path": "auto", "min_ms": 50}
//	    two warm-up searches, then the calls per repetition that make one
//	    repetition last ≥ min_ms; path is a GPUConfig.Path (auto, tiled,
//	    segments, fused) of the fp16 index, or "int8" (the int8 index)
//	{"op": "time", "batch": B, "k": 10, "path": "auto", "calls": C}
//	    C searches of the same B queries back to back: mean ms per call
//	    (wall clock around Search, results on the host as for torch's .cpu())
//	{"op": "canary"}
//	    the GPU search canary (ann.SearchCanary, as ann.Open runs it before
//	    serving) over the loaded index, and over the int8 one when loaded:
//	    "report" and "int8_report" (internal/canary.Report: passed,
//	    seconds, max |Δ score| against its bar), an "error" naming the
//	    first differing query on a mismatch; with -cpu it runs over the
//	    CPU flat index (the canary's CPU side, timed)
//	{"op": "http", "concurrency": 32, "seconds": 8, "topk": 3}
//	    /retrieve through the real HTTP layer (package server) over the
//	    loaded index, one query per request, precomputed query vectors and
//	    generated documents: closed loop at the concurrency (requests/s,
//	    p50, p99), then open loop (Poisson, bench/loadgen) at 80% of that
//	    rate (p50, p99)
//	{"op": "e2e", "model": DIR, "provider": "gpu", "batch": 512, "tokens": 32,
//	 "topk": 3, "reps": 7, "concurrency": 4, "single_concurrency": 32, "seconds": 8}
//	    /retrieve with E5 end to end over the loaded index: text queries of
//	    exactly "tokens" tokens, the encoder of DIR (embed.Open; "cpu" with
//	    -cpu) and the index's search, directly (index.NewDenseRetriever,
//	    encode and search alone too) and through package server (requests
//	    of "batch" queries; single-query requests through the batching
//	    queue); see e2e.go
//	{"op": "model", "kind": "e5"|"qwen3", "name": "e5-base", "model": DIR, "provider": "gpu"|"cuda"|"cpu",
//	 "ort_lib": LIB, "parity": DIR, "workloads": [[512, 32], [128, 256]], "seconds": 2, "canary": true}
//	    one model through embed.Open / rerank.Open on that provider (the
//	    model canary runs as at serving; "canary": false skips it), parity
//	    against inference.py's PyTorch fp32 references, end-to-end timing
//	    rows (EmbedIDs / ScoreIDs); see models.go
//	{"op": "quit"}
//
// -cpu replaces the GPU index with exact flat search on the CPU (for
// `bench/gpu/run.sh --dry-run`, which checks the whole protocol on a
// machine without a GPU); "copy" then answers {"skipped": ...}.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/x448/float16"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/ann"
	"github.com/rlsearch/rlsearch/bench/loadgen"
	"github.com/rlsearch/rlsearch/cuda"
	"github.com/rlsearch/rlsearch/server"
)

func main() {
	cpu := flag.Bool("cpu", false, "exact flat search on the CPU instead of the GPU (dry runs)")
	flag.Parse()
	b := &bench{cpu: *cpu, out: json.NewEncoder(os.Stdout)}
	if err := b.serve(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench:", err)
		os.Exit(1)
	}
}

// cmd is one protocol command.
type cmd struct {
	Op          string  `json:"op"`
	N           int     `json:"n"`
	Dim         int     `json:"dim"`
	Seed        uint64  `json:"seed"`
	Batch       int     `json:"batch"`
	K           int     `json:"k"`
	Path        string  `json:"path"`
	MinMS       float64 `json:"min_ms"`
	Calls       int     `json:"calls"`
	MiB         int     `json:"mib"`
	Reps        int     `json:"reps"`
	Concurrency int     `json:"concurrency"`
	Seconds     float64 `json:"seconds"`
	TopK        int     `json:"topk"`
	Int8        bool    `json:"int8"`
	// e2e
	Model             string `json:"model"`
	Provider          string `json:"provider"`
	Tokens            int    `json:"tokens"`
	SingleConcurrency int    `json:"single_concurrency"`
}

// index is what both backends offer.
type searchIndex interface {
	Search(ctx context.Context, q []float32, k int) ([][]rlsearch.Hit, error)
	Len() int
	Dim() int
}

type bench struct {
	cpu     bool
	out     *json.Encoder
	loaded  cmd // the last "load"
	idx     searchIndex
	i8      searchIndex // the int8 index of "load" with "int8", or nil
	closeFn func() error
	queries map[int][]float32 // per batch size
}

func (b *bench) serve(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var c cmd
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			b.reply(map[string]any{"error": "bad command: " + err.Error()})
			continue
		}
		if c.Op == "quit" {
			b.reply(map[string]any{"ok": true})
			break
		}
		var res map[string]any
		var err error
		if c.Op == "model" {
			res, err = b.doModel([]byte(line), c)
		} else {
			res, err = b.do(c)
		}
		if err != nil {
			res = map[string]any{"error": err.Error()}
			if c.Op == "model" { // which model line failed
				res["model"], res["provider"] = c.Model, c.Provider
			}
		}
		res["op"] = c.Op
		b.reply(res)
	}
	if b.closeFn != nil {
		b.closeFn()
	}
	return sc.Err()
}

func (b *bench) reply(v map[string]any) {
	if err := b.out.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "gpubench: write:", err)
		os.Exit(1)
	}
}

// Bounds of the protocol's sizes, far above any use (21M × 768 is 1.6e10
// values) but low enough that a typo is an error line, not a crash.
const (
	maxValues = 1 << 35 // n · dim of a load
	maxDim    = 1 << 16
	maxBatch  = 1 << 16 // queries of a time, calibrate or e2e command
)

// check refuses negative numbers and sizes past the bounds above.
func (c cmd) check() error {
	for name, v := range map[string]float64{"n": float64(c.N), "dim": float64(c.Dim), "batch": float64(c.Batch), "k": float64(c.K),
		"min_ms": c.MinMS, "calls": float64(c.Calls), "mib": float64(c.MiB), "reps": float64(c.Reps), "concurrency": float64(c.Concurrency),
		"seconds": c.Seconds, "topk": float64(c.TopK), "tokens": float64(c.Tokens), "single_concurrency": float64(c.SingleConcurrency)} {
		if v < 0 || math.IsNaN(v) {
			return fmt.Errorf("%q = %v must be ≥ 0", name, v)
		}
	}
	switch {
	case c.Dim > maxDim:
		return fmt.Errorf(`"dim" = %d is above %d`, c.Dim, maxDim)
	case float64(c.N)*float64(max(c.Dim, 768)) > maxValues:
		return fmt.Errorf(`"n" · "dim" = %d · %d is above %d values`, c.N, max(c.Dim, 768), int64(maxValues))
	case c.Batch > maxBatch:
		return fmt.Errorf(`"batch" = %d is above %d`, c.Batch, maxBatch)
	case c.Calls > 100_000 || c.Reps > 10_000 || c.Concurrency > 4096 || c.SingleConcurrency > 4096 || c.MiB > 1<<20:
		return errors.New(`"calls", "reps", "concurrency", "single_concurrency" or "mib" is implausibly large`)
	case c.Seconds > 3600 || c.MinMS > 60_000:
		return errors.New(`"seconds" is above 3,600 or "min_ms" above 60,000`)
	}
	return nil
}

// doModel is do for the "model" op, which reads fields of its own.
func (b *bench) doModel(line []byte, c cmd) (res map[string]any, err error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Op, err)
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%s: panic: %v", c.Op, r)
		}
	}()
	return b.modelBench(line, c)
}

func (b *bench) do(c cmd) (res map[string]any, err error) {
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Op, err)
	}
	defer func() { // a bug answers as an error line instead of killing the run
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("%s: panic: %v", c.Op, r)
		}
	}()
	switch c.Op {
	case "copy":
		return b.copyBandwidth(c)
	case "load":
		return b.load(c)
	case "calibrate", "time":
		return b.timeSearch(c)
	case "http":
		return b.httpBench(c)
	case "canary":
		return b.canary()
	case "e2e":
		return b.endToEnd(c)
	}
	return nil, fmt.Errorf("unknown op %q", c.Op)
}

// copyBandwidth times cuMemcpyDtoDAsync of mib MiB between two buffers.
func (b *bench) copyBandwidth(c cmd) (map[string]any, error) {
	if b.cpu {
		return map[string]any{"skipped": "no GPU (-cpu)"}, nil
	}
	mib, reps := or(c.MiB, 4096), or(c.Reps, 10)
	dev, err := cuda.Open(0)
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	var gbs []float64
	err = dev.Do(func(cx *cuda.Ctx) error {
		n := int64(mib) << 20
		src, err := cx.Alloc(n)
		if err != nil {
			return err
		}
		defer src.Close()
		dst, err := cx.Alloc(n)
		if err != nil {
			return err
		}
		defer dst.Close()
		s, err := cx.NewStream()
		if err != nil {
			return err
		}
		if err := cx.MemsetD32Async(src, 0, 0x3c003c00, n/4, s); err != nil { // fp16 ones, not zeros
			return err
		}
		t0, err := cx.NewEvent(true)
		if err != nil {
			return err
		}
		t1, err := cx.NewEvent(true)
		if err != nil {
			return err
		}
		for i := -2; i < reps; i++ { // two warm-ups
			if err := cx.Record(t0, s); err != nil {
				return err
			}
			if err := cx.CopyDtoDAsync(dst, 0, src, 0, n, s); err != nil {
				return err
			}
			if err := cx.Record(t1, s); err != nil {
				return err
			}
			if err := cx.EventSync(t1); err != nil {
				return err
			}
			ms, err := cx.Elapsed(t0, t1)
			if err != nil {
				return err
			}
			if i >= 0 {
				gbs = append(gbs, 2*float64(n)/(float64(ms)*1e-3)/1e9)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"impl": "rlsearch", "mib": mib, "reps": reps, "gbps": median(gbs), "gbps_all": gbs}, nil
}

func (b *bench) load(c cmd) (map[string]any, error) {
	if b.closeFn != nil {
		b.closeFn()
		b.idx, b.i8, b.closeFn = nil, nil, nil
	}
	n, dim := c.N, or(c.Dim, 768)
	if n <= 0 {
		return nil, errors.New("load: n must be positive")
	}
	b.queries = map[int][]float32{}
	b.loaded = c
	t0 := time.Now()
	res := map[string]any{"n": n, "dim": dim}
	if b.cpu {
		vecs := make([]float32, 0, n*dim)
		src := UnitRows(n, dim, c.Seed)
		for {
			_, raw, err := src()
			if err == io.EOF {
				break
			}
			for i := 0; i < len(raw); i += 2 {
				vecs = append(vecs, float16.Frombits(binary.LittleEndian.Uint16(raw[i:])).Float32())
			}
		}
		f, err := ann.NewFlat(vecs, dim, ann.FP16)
		if err != nil {
			return nil, err
		}
		b.idx, b.closeFn = f, func() error { return nil }
		res["backend"] = "cpu flat (" + ann.KernelName() + ")"
	} else {
		g, err := ann.NewGPUStream(ann.Header{DType: ann.FP16, Count: n, Dim: dim, Normalized: true}, UnitRows(n, dim, c.Seed),
			ann.GPUConfig{Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
		if err != nil {
			return nil, err
		}
		b.idx, b.closeFn = g, g.Close
		res["backend"] = "gpu " + strings.Join(g.Devices(), ", ")
		res["paths"] = g.Paths()
	}
	res["upload_s"] = time.Since(t0).Seconds()
	if c.Int8 {
		// A failed int8 index (out of GPU memory, dim % 16 != 0) is
		// reported beside the fp16 one, which stays loaded and timed.
		t1 := time.Now()
		if err := b.loadInt8(n, dim, c.Seed, res); err != nil {
			res["int8_error"] = err.Error()
		} else {
			res["int8_upload_s"] = time.Since(t1).Seconds()
		}
	}
	return res, nil
}

// loadInt8 builds b.i8 over Int8Rows: ann.NewGPUStream under
// GPUConfig.Int8, or with -cpu an int8 ann.Flat of the decoded rows
// (which NewFlat quantises again: a dry run checks the protocol only).
func (b *bench) loadInt8(n, dim int, seed uint64, res map[string]any) error {
	h := Int8Header(n, dim)
	src := Int8Rows(n, dim, seed)
	if b.cpu {
		if dim%16 != 0 { // as the GPU refuses it (ann.GPUConfig.Int8), so that dry runs see the same
			return fmt.Errorf("dim %d is not a multiple of 16 (ann.GPUConfig.Int8)", dim)
		}
		vecs := make([]float32, 0, n*dim)
		for {
			_, raw, err := src()
			if err == io.EOF {
				break
			}
			for i, c := range raw {
				vecs = append(vecs, h.Scale[i%dim]*float32(int8(c)))
			}
		}
		f, err := ann.NewFlat(vecs, dim, ann.INT8)
		if err != nil {
			return err
		}
		b.i8 = f
		return nil
	}
	g, err := ann.NewGPUStream(h, src, ann.GPUConfig{Int8: true, Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }})
	if err != nil {
		return err
	}
	prev := b.closeFn
	b.i8, b.closeFn = g, func() error { return errors.Join(g.Close(), prev()) }
	res["int8_paths"] = g.Paths()
	return nil
}

// canary runs ann.SearchCanary over the loaded index (and the int8 one).
func (b *bench) canary() (map[string]any, error) {
	if b.idx == nil {
		return nil, errors.New("no index loaded")
	}
	dim := or(b.loaded.Dim, 768)
	ctx := context.Background()
	rep, err := ann.SearchCanary(ctx, b.idx, canaryRows(dim, b.loaded.Seed, false))
	res := map[string]any{"n": b.idx.Len(), "report": rep, "summary": rep.String()}
	if err != nil {
		return nil, err
	}
	if b.i8 != nil {
		var rows func(lo, hi int) []float32
		if _, gpu := b.i8.(*ann.GPUFlat); gpu {
			rows = canaryRows(dim, b.loaded.Seed, true)
		} else { // -cpu: the int8 Flat quantised the rows again; it holds its own
			rows = b.i8.(*ann.Flat).Vectors
		}
		rep8, err := ann.SearchCanary(ctx, b.i8, rows)
		if err != nil {
			return nil, fmt.Errorf("int8 index: %w", err)
		}
		res["int8_report"], res["int8_summary"] = rep8, rep8.String()
	}
	return res, nil
}

func (b *bench) timeSearch(c cmd) (map[string]any, error) {
	if b.idx == nil {
		return nil, errors.New("no index loaded")
	}
	batch, k := or(c.Batch, 1), or(c.K, 10)
	path := c.Path
	if path == "" {
		path = ann.GPUPathAuto
	}
	idx := b.idx
	if path == "int8" {
		if b.i8 == nil {
			return nil, errors.New(`path "int8": no int8 index loaded (load with "int8": true)`)
		}
		idx = b.i8
	} else if g, ok := idx.(*ann.GPUFlat); ok {
		if err := g.SetPath(path); err != nil {
			return nil, err
		}
	}
	q, ok := b.queries[batch]
	if !ok {
		q = unitQueries(batch, b.idx.Dim(), uint64(batch))
		b.queries[batch] = q
	}
	run := func(calls int) (float64, error) {
		t0 := time.Now()
		for i := 0; i < calls; i++ {
			if _, err := idx.Search(context.Background(), q, k); err != nil {
				return 0, err
			}
		}
		return time.Since(t0).Seconds() * 1e3 / float64(calls), nil
	}
	res := map[string]any{"batch": batch, "k": k, "path": path, "n": idx.Len()}
	if g, ok := idx.(*ann.GPUFlat); ok {
		defer func() { res["overflows"] = g.Overflows() }()
	}
	if c.Op == "calibrate" {
		if _, err := run(2); err != nil { // warm-up: JIT, cuBLAS heuristics, first allocations
			return nil, err
		}
		ms, err := run(1)
		if err != nil {
			return nil, err
		}
		res["calls"] = max(1, min(1000, int(math.Ceil(or(c.MinMS, 50)/max(ms, 1e-3)))))
		res["ms"] = ms
		return res, nil
	}
	ms, err := run(or(c.Calls, 1))
	if err != nil {
		return nil, err
	}
	res["ms"] = ms
	res["calls"] = or(c.Calls, 1)
	return res, nil
}

// httpBench serves the loaded index through package server on loopback.
func (b *bench) httpBench(c cmd) (map[string]any, error) {
	if b.idx == nil {
		return nil, errors.New("no index loaded")
	}
	conc, secs, topk := or(c.Concurrency, 32), c.Seconds, or(c.TopK, 3)
	if secs <= 0 {
		secs = 8
	}
	if g, ok := b.idx.(*ann.GPUFlat); ok {
		if err := g.SetPath(ann.GPUPathAuto); err != nil {
			return nil, err
		}
	}
	const nQueries = 4096
	r := &vectorRetriever{idx: b.idx, q: unitQueries(nQueries, b.idx.Dim(), 7), dim: b.idx.Dim()}
	url, stop, err := serveLoopback(r, b.idx.Len())
	if err != nil {
		return nil, err
	}
	defer stop()
	body := func(i int) []byte {
		return []byte(fmt.Sprintf(`{"queries": ["q%d"], "topk": %d, "return_scores": true}`, i%nQueries, topk))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}}
	closed, err := warmClosedLoop(client, url, body, conc, secs)
	if err != nil {
		return nil, err
	}
	res := map[string]any{"n": b.idx.Len(), "concurrency": conc, "topk": topk, "closed": closed}
	rate := 0.8 * closed["rps"].(float64)
	open, err := loadgen.Run(context.Background(), loadgen.Config{URL: url, Body: body, Rate: rate, Concurrency: conc,
		Duration: time.Duration(secs * float64(time.Second)), Client: client})
	if err != nil {
		return nil, err
	}
	res["open"] = map[string]any{"rate": rate, "throughput": open.Throughput, "ok": open.OK, "errors": open.Errors,
		"p50_ms": ms(open.P50), "p99_ms": ms(open.P99), "first_error": open.FirstError}
	if g, ok := b.idx.(*ann.GPUFlat); ok {
		res["overflows"] = g.Overflows()
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// serveLoopback serves r as the e5 retriever of package server, over
// genDocs documents for n rows, on a free loopback port: the /retrieve URL
// and the function that stops the server.
func serveLoopback(r rlsearch.Retriever, n int) (string, func(), error) {
	srv, err := server.New(server.Config{
		Retrievers: map[string]rlsearch.Retriever{rlsearch.RetrieverE5: r},
		Docs:       genDocs{n: n},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registry:   prometheus.NewRegistry(),
	})
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/retrieve", func() { hs.Close() }, nil
}

// warmClosedLoop is closedLoop for secs seconds after one second of it as
// a warm-up; a run in which no request completed is an error.
func warmClosedLoop(client *http.Client, url string, body func(int) []byte, conc int, secs float64) (map[string]any, error) {
	if _, err := closedLoop(client, url, body, conc, time.Second); err != nil {
		return nil, err
	}
	r, err := closedLoop(client, url, body, conc, time.Duration(secs*float64(time.Second)))
	if err == nil && r["requests"].(int) == 0 {
		err = fmt.Errorf("no request completed in %v s", secs)
	}
	return r, err
}

// closedLoop runs conc clients back to back for d: requests/s, latency
// percentiles; any non-200 answer is an error.
func closedLoop(client *http.Client, url string, body func(int) []byte, conc int, d time.Duration) (map[string]any, error) {
	var mu sync.Mutex
	var lat []time.Duration
	var firstErr error
	deadline := time.Now().Add(d)
	t0 := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []time.Duration
			for i := w; time.Now().Before(deadline); i += conc {
				s := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body(i)))
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					mu.Lock()
					firstErr = cmp(firstErr, err)
					mu.Unlock()
					return
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	el := time.Since(t0)
	if firstErr != nil {
		return nil, fmt.Errorf("closed loop: %w", firstErr)
	}
	slices.Sort(lat)
	return map[string]any{"requests": len(lat), "seconds": el.Seconds(), "rps": float64(len(lat)) / el.Seconds(),
		"p50_ms": ms(loadgen.Percentile(lat, 50)), "p99_ms": ms(loadgen.Percentile(lat, 99))}, nil
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// vectorRetriever answers "q<i>" with precomputed query vector i (the
// encoder is not what is measured).
type vectorRetriever struct {
	idx searchIndex
	q   []float32
	dim int
}

func (r *vectorRetriever) Name() string { return rlsearch.RetrieverE5 }

func (r *vectorRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	q := make([]float32, 0, len(queries)*r.dim)
	for _, s := range queries {
		i, err := strconv.Atoi(strings.TrimPrefix(s, "q"))
		if err != nil || !strings.HasPrefix(s, "q") || i < 0 || i*r.dim >= len(r.q) {
			return nil, fmt.Errorf("%w: gpubench: query %q is not q0..q%d", rlsearch.ErrBadInput, s, len(r.q)/r.dim-1)
		}
		q = append(q, r.q[i*r.dim:(i+1)*r.dim]...)
	}
	return r.idx.Search(ctx, q, k)
}

// genDocs makes a passage-sized document for any row.
type genDocs struct{ n int }

func (d genDocs) Len() int { return d.n }

const passage = "was an American film director and producer. He is best known for his work in the silent era, " +
	"directing more than forty feature films between 1915 and 1931 for several studios, among them Paramount and " +
	"Fox. Born in Ohio, he began as an actor in stock companies before moving to Los Angeles, where he joined the " +
	"camera department of a small studio and soon directed short comedies. His later films were dramas set in the " +
	"American West; several are preserved in the Library of Congress."

func (d genDocs) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || int(row) >= d.n {
		return rlsearch.Document{}, fmt.Errorf("gpubench: row %d outside %d documents", row, d.n)
	}
	return rlsearch.Document{ID: strconv.Itoa(int(row)), Contents: fmt.Sprintf("\"Passage %d\"\nPassage %d %s", row, row, passage)}, nil
}

func or[T int | float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
