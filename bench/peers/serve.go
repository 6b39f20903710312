package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/rlsearch/rlsearch/bench"
	"github.com/rlsearch/rlsearch/bench/loadgen"
)

// Systems of the serve suite.
const (
	// SystemOurs is rlsearch itself (`rlsearch serve`).
	SystemOurs = "rlsearch"
	// peerSearchR1 prefixes the Python peer's System name.
	peerSearchR1 = "python-searchr1"
)

// ServeOptions configure the serve suite's load. Zero fields mean defaults.
type ServeOptions struct {
	// TopK per query; default 3 (Search-R1's default topk).
	TopK int
	// QueriesPerRequest; default 1 (one search call of one rollout).
	QueriesPerRequest int
	// Concurrency caps requests in flight; default 64.
	Concurrency int
	// Arrivals is loadgen.Poisson (default) or loadgen.Uniform.
	Arrivals string
	// P99 is the latency bound of the rate search; default 100 ms (issue 15).
	P99 time.Duration
	// Start and Max bound the rates tried (requests/s); defaults 64, 50,000.
	Start, Max float64
	// Step is the length of one rate-search step; default 2 s (Quick 1 s).
	Step time.Duration
	// MinRequests stretches steps at low rates to this many arrivals
	// (loadgen.SearchConfig.MinRequests); default 200, <0 none.
	MinRequests int
	// Precision ends the bisection at failing/passing ≤ 1+Precision;
	// default 0.1 (Quick 0.25).
	Precision float64
	// Routes are the /retrieve routes measured: RouteBM25 and/or RouteE5;
	// default both (the dense route is skipped, with a progress line, when
	// the model, ONNX Runtime or the peer's faiss is missing).
	Routes []string
	// Systems are the servers measured: SystemOurs and/or "python-searchr1";
	// default both.
	Systems []string
}

func (s ServeOptions) defaults(quick bool) ServeOptions {
	if s.TopK == 0 {
		s.TopK = 3
	}
	if s.QueriesPerRequest == 0 {
		s.QueriesPerRequest = 1
	}
	if s.Concurrency == 0 {
		s.Concurrency = 64
	}
	if s.Arrivals == "" {
		s.Arrivals = loadgen.Poisson
	}
	if s.P99 == 0 {
		s.P99 = 100 * time.Millisecond
	}
	if s.Start == 0 {
		s.Start = 64
	}
	if s.Max == 0 {
		s.Max = 50000
	}
	if s.Step == 0 {
		s.Step = 2 * time.Second
		if quick {
			s.Step = time.Second
		}
	}
	if s.Precision == 0 {
		s.Precision = 0.1
		if quick {
			s.Precision = 0.25
		}
	}
	if len(s.Routes) == 0 {
		s.Routes = []string{RouteBM25, RouteE5}
	}
	if len(s.Systems) == 0 {
		s.Systems = []string{SystemOurs, peerSearchR1}
	}
	return s
}

func (s ServeOptions) validate() error {
	for _, sys := range s.Systems {
		if sys != SystemOurs && sys != peerSearchR1 {
			return fmt.Errorf("%w: Serve.Systems holds %q (want %q or %q)", ErrOptions, sys, SystemOurs, peerSearchR1)
		}
	}
	for _, r := range s.Routes {
		if r != RouteBM25 && r != RouteE5 {
			return fmt.Errorf("%w: Serve.Routes holds %q (want %q or %q)", ErrOptions, r, RouteBM25, RouteE5)
		}
	}
	switch {
	case s.TopK < 1 || s.QueriesPerRequest < 1 || s.Concurrency < 1:
		return fmt.Errorf("%w: Serve TopK %d, QueriesPerRequest %d, Concurrency %d must be ≥ 1", ErrOptions, s.TopK, s.QueriesPerRequest, s.Concurrency)
	case s.Arrivals != loadgen.Poisson && s.Arrivals != loadgen.Uniform:
		return fmt.Errorf("%w: Serve.Arrivals %q", ErrOptions, s.Arrivals)
	case s.Step <= 0 || s.P99 <= 0:
		return fmt.Errorf("%w: Serve.Step %v and Serve.P99 %v must be positive", ErrOptions, s.Step, s.P99)
	}
	return nil
}

// ServeConfig is the Config key of a serve measurement: the rate search
// (rate = 0) or a fixed-rate run at rate requests/s.
func ServeConfig(route string, topk, queriesPerRequest, concurrency int, arrivals string, p99 time.Duration, rate float64) string {
	s := fmt.Sprintf("retrieve %s top%d queries/request=%d concurrency=%d %s", route, topk, queriesPerRequest, concurrency, arrivals)
	if rate == 0 {
		return s + fmt.Sprintf(" max rate at p99<=%v", p99)
	}
	return s + fmt.Sprintf(" rate=%g", rate)
}

// CheckRetrieve checks that body is a /retrieve answer to nq queries with
// at most topk hits each: {"result": [[{"document": {"id", "contents"},
// "score"}]]} when scores, bare documents otherwise (Search-R1's contract,
// DESIGN.md). Each query must get at least one hit.
func CheckRetrieve(body []byte, nq, topk int, scores bool) error {
	var ans struct {
		Result [][]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return fmt.Errorf("not a /retrieve answer: %v", err)
	}
	if len(ans.Result) != nq {
		return fmt.Errorf("%d result lists for %d queries", len(ans.Result), nq)
	}
	type doc struct {
		ID       *string `json:"id"`
		Contents *string `json:"contents"`
	}
	for i, hits := range ans.Result {
		if len(hits) == 0 || len(hits) > topk {
			return fmt.Errorf("query %d: %d hits, want 1..%d", i, len(hits), topk)
		}
		for j, h := range hits {
			var d doc
			if scores {
				var sh struct {
					Document *doc     `json:"document"`
					Score    *float64 `json:"score"`
				}
				if err := json.Unmarshal(h, &sh); err != nil || sh.Document == nil || sh.Score == nil {
					return fmt.Errorf("query %d hit %d: want {\"document\": {...}, \"score\": number}, got %.120s", i, j, h)
				}
				d = *sh.Document
			} else if err := json.Unmarshal(h, &d); err != nil {
				return fmt.Errorf("query %d hit %d: want a document object, got %.120s", i, j, h)
			}
			if d.ID == nil || d.Contents == nil || *d.Contents == "" {
				return fmt.Errorf("query %d hit %d: document without id or contents: %.120s", i, j, h)
			}
		}
	}
	return nil
}

// server is a started server process on loopback.
type server struct {
	name string // System
	url  string // base URL, no trailing slash
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been reaped
	err  error         // its exit status, set before done closes
	log  *tailWriter
}

// stop sends SIGTERM and waits (SIGKILL after 10 s).
func (s *server) stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// waitHealthy polls url/healthz until 200, the process exits or timeout.
func (s *server) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if s.url != "" {
			resp, err := http.Get(s.url + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w: %s exited before serving: %v\n%s", ErrPeer, s.name, s.err, s.log.tail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%w: %s not healthy after %v\n%s", ErrPeer, s.name, timeout, s.log.tail())
}

// start starts cmd; onExit (may be nil) runs after the process is reaped.
func start(name string, cmd *exec.Cmd, progress io.Writer, onExit func()) (*server, error) {
	s := &server{name: name, cmd: cmd, done: make(chan struct{}), log: &tailWriter{w: io.Discard, max: 4096}}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: start %s: %v", ErrPeer, name, err)
	}
	go func() {
		s.err = cmd.Wait()
		if onExit != nil {
			onExit()
		}
		close(s.done)
	}()
	fmt.Fprintf(progress, "peers: started %s (pid %d)\n", name, cmd.Process.Pid)
	return s, nil
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// startOurs runs `rlsearch serve` on an ephemeral loopback port; with a
// model (the dense route) it passes --model and o.ORTLib. The result cache
// is off: the load cycles through one question set, which a cache would
// answer from memory, and the peer has none.
func startOurs(ctx context.Context, o Options, bin, index, model string, progress io.Writer) (*server, error) {
	args := []string{"serve", "--index", index, "--addr", "127.0.0.1:0", "--cache-bytes", "off"}
	if model != "" {
		args = append(args, "--model", model)
		if o.DenseVectors != "" { // imported vectors the model did not make: its self-check would refuse them
			args = append(args, "--self-check=false")
		}
	}
	cmd := exec.Command(bin, args...)
	if model != "" {
		cmd.Env = env("ONNXRUNTIME_LIB", o.ORTLib)
	}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	s, err := start(SystemOurs, cmd, progress, func() { pw.Close() })
	if err != nil {
		return nil, err
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case s.url = <-urls:
	case <-s.done:
		return nil, fmt.Errorf("%w: rlsearch serve exited: %v\n%s", ErrPeer, s.err, s.log.tail())
	case <-time.After(2 * time.Minute):
		s.stop()
		return nil, fmt.Errorf("%w: rlsearch serve did not listen within 2 minutes\n%s", ErrPeer, s.log.tail())
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
	if err := s.waitHealthy(ctx, time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// startSearchR1 runs bench/peers/searchr1_server.py on a free loopback port:
// without dense, the bm25 route (its Xapian database cached in WorkDir per
// corpus); with dense (a denseExport directory), the dense route alone from
// faiss, under searchR1DenseEnv.
func startSearchR1(ctx context.Context, o Options, dense string, progress io.Writer) (*server, error) {
	p, err := script(o.WorkDir, "searchr1_server.py")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(Python, p, "--corpus", o.Corpus, "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Env = env("PYTHONPATH", "")
	if dense != "" {
		// One retriever per server, as Search-R1's: no Xapian database to
		// build for the dense route (an hour-scale job at 1M passages).
		cmd.Args = append(cmd.Args, "--dense", dense, "--encoder", o.Model, "--threads", fmt.Sprint(runtime.NumCPU()))
		cmd.Env = searchR1DenseEnv(o)
	} else {
		cmd.Args = append(cmd.Args, "--index", filepath.Join(o.WorkDir, "xapian-"+corpusKey(o.Corpus)))
	}
	s, err := start(peerSearchR1, cmd, progress, nil)
	if err != nil {
		return nil, err
	}
	s.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := s.waitHealthy(ctx, 5*time.Minute); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// searchR1System names the Python peer of route with its packages'
// versions (and, for the dense route, the faiss build it loads).
func searchR1System(o Options, route string) string {
	if route == RouteE5 {
		cmd := exec.Command(Python, "-c", "import faiss, fastapi, uvicorn, torch; print(faiss.__version__, fastapi.__version__, uvicorn.__version__, torch.__version__)")
		cmd.Env = searchR1DenseEnv(o)
		out, err := cmd.Output()
		f := strings.Fields(string(out))
		if err != nil || len(f) != 4 {
			return peerSearchR1
		}
		return fmt.Sprintf("%s (FastAPI %s, uvicorn %s, torch %s E5 encoder fp32, faiss %s %s IndexFlatIP)", peerSearchR1, f[1], f[2], f[3], f[0], searchR1FaissBuild(o))
	}
	out, err := exec.Command(Python, "-c", "import xapian, fastapi, uvicorn; print(xapian.version_string(), fastapi.__version__, uvicorn.__version__)").Output()
	f := strings.Fields(string(out))
	if err != nil || len(f) != 3 {
		return peerSearchR1
	}
	return fmt.Sprintf("%s (FastAPI %s, uvicorn %s, Xapian %s BM25)", peerSearchR1, f[1], f[2], f[0])
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// corpusKey identifies a file (a corpus, a binary) by path, size and
// modification time.
func corpusKey(path string) string {
	h := fnv.New64a()
	abs, _ := filepath.Abs(path)
	fmt.Fprint(h, abs)
	if st, err := os.Stat(path); err == nil {
		fmt.Fprint(h, st.Size(), st.ModTime().UnixNano())
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// rlsearchBinary resolves Options.Rlsearch.
func rlsearchBinary(o Options) (string, error) {
	if o.Rlsearch != "" {
		if _, err := os.Stat(o.Rlsearch); err != nil {
			return "", fmt.Errorf("%w: rlsearch binary: %v", ErrMissing, err)
		}
		return o.Rlsearch, nil
	}
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) == "rlsearch" {
		return exe, nil
	} else if err == nil && filepath.Base(exe) == "rlsearch-bench" { // the serving binary beside it (make build)
		if p := filepath.Join(filepath.Dir(exe), "rlsearch"); fileExists(p) {
			return p, nil
		}
	}
	if o.Root != "" {
		p := filepath.Join(o.Root, "bin", "rlsearch")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: no rlsearch binary for the serve suite (make build, or Options.Rlsearch)", ErrMissing)
}

// oursIndex returns o.Index or builds (once) an index of o.Corpus in WorkDir.
func oursIndex(ctx context.Context, o Options, bin string, progress io.Writer) (string, error) {
	if o.Index != "" {
		return o.Index, nil
	}
	// Keyed by the binary too: another rlsearch version may write another format.
	dir := filepath.Join(o.WorkDir, "rlsearch-index-"+corpusKey(o.Corpus)+"-"+corpusKey(bin))
	done := filepath.Join(dir, ".peers-complete")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	fmt.Fprintf(progress, "peers: indexing %s for rlsearch serve into %s\n", o.Corpus, dir)
	cmd := exec.CommandContext(ctx, bin, "index", "--corpus", o.Corpus, "--out", dir, "--force", "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: rlsearch index: %v\n%s", ErrPeer, err, out)
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

// readQuestions returns the texts of the first max questions of a
// question-set JSONL (bench.LoadQuestions).
func readQuestions(path string, max int) ([]string, error) {
	qs, err := bench.LoadQuestions(path)
	if err != nil {
		return nil, err
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return bench.Texts(qs[:min(max, len(qs))]), nil
}

// retrieveLoad is the loadgen.Config of /retrieve requests of route over qs.
func retrieveLoad(url, route string, qs []string, so ServeOptions, seed uint64) loadgen.Config {
	return loadgen.Config{
		URL: url + "/retrieve", Arrivals: so.Arrivals, Seed: seed, Concurrency: so.Concurrency,
		Duration: so.Step, Timeout: 10 * time.Second, SampleLatencies: 512,
		Body: func(i int) []byte {
			batch := make([]string, so.QueriesPerRequest)
			for j := range batch {
				batch[j] = qs[(i*so.QueriesPerRequest+j)%len(qs)]
			}
			b, _ := json.Marshal(map[string]any{"queries": batch, "topk": so.TopK, "return_scores": true, "retriever": route})
			return b
		},
		Check: func(b []byte) error { return CheckRetrieve(b, so.QueriesPerRequest, so.TopK, true) },
	}
}

func rep(r loadgen.Result, throughput float64) bench.Rep {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	out := bench.Rep{Throughput: throughput, P50ms: ms(r.P50), P95ms: ms(r.P95), P99ms: ms(r.P99),
		Errors: r.Errors, Ops: int64(r.Sent), Elapsed: r.Elapsed,
		Extra: map[string]float64{"rate": r.Rate, "achieved_rate": r.AchievedRate, "ok_throughput": r.Throughput}}
	for _, l := range r.Sample {
		out.Latencies = append(out.Latencies, ms(l))
	}
	return out
}

func runServe(ctx context.Context, o Options, progress io.Writer) (rows []bench.Row, err error) {
	qs, err := readQuestions(o.Questions, 2000)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMissing, err)
	}
	bin, err := rlsearchBinary(o)
	if err != nil {
		return nil, err
	}
	for _, route := range o.Serve.Routes {
		if route == RouteE5 {
			if err := denseReady(o); err != nil {
				fmt.Fprintf(progress, "peers: serve: dense route skipped: %v\n", err)
				continue
			}
		}
		rr, err := serveRoute(ctx, o, route, bin, qs, progress)
		rows = append(rows, rr...)
		if err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// serveNote is the Note of the serve rows of route.
func serveNote(route string) string {
	common := "rlsearch serve on all cores, the peer as Search-R1 runs it (one uvicorn process); both on loopback, load generator in the bench process on the same cores"
	if route == RouteE5 {
		return "dense route (E5 model, exact inner-product search over the same passage vectors); both encode every query at " +
			"request time with the same weights: ours with ONNX Runtime (batching queue), the peer with torch fp32, one padded " +
			"batch per request as Search-R1's Encoder; " + common
	}
	return "sparse route (BM25; Xapian BM25 k1=0.9 b=0.4 in the peer); " + common
}

// serveRoute starts the systems for route, measures them and stops them.
func serveRoute(ctx context.Context, o Options, route, bin string, qs []string, progress io.Writer) (rows []bench.Row, err error) {
	so := o.Serve
	type target struct {
		sys string
		srv *server
	}
	var targets []target
	defer func() {
		for _, t := range targets {
			t.srv.stop()
		}
	}()
	var ix, model, dense string
	if route == RouteE5 {
		model = o.Model
		if ix, err = denseIndex(ctx, o, bin, progress); err != nil {
			return nil, err
		}
		if slices.Contains(so.Systems, peerSearchR1) {
			if dense, err = denseExport(ctx, o, ix, qs, progress); err != nil {
				return nil, err
			}
		}
	} else if slices.Contains(so.Systems, SystemOurs) {
		if ix, err = oursIndex(ctx, o, bin, progress); err != nil {
			return nil, err
		}
	}
	for _, sys := range so.Systems {
		var s *server
		name := sys
		if sys == SystemOurs {
			if s, err = startOurs(ctx, o, bin, ix, model, progress); err != nil {
				return nil, err
			}
		} else {
			name = searchR1System(o, route)
			if s, err = startSearchR1(ctx, o, dense, progress); err != nil {
				return nil, err
			}
		}
		targets = append(targets, target{name, s})
	}
	params := map[string]any{"route": route, "topk": so.TopK, "queries_per_request": so.QueriesPerRequest,
		"concurrency": so.Concurrency, "arrivals": so.Arrivals, "p99_bound_ms": float64(so.P99) / 1e6}
	if route == RouteE5 {
		params["model"] = filepath.Base(o.Model)
	}
	note := serveNote(route)
	best := map[string][]float64{}
	for _, t := range targets {
		// Warm up (page cache, connection pool, Python imports on first call).
		wc := retrieveLoad(t.srv.url, route, qs, so, 99)
		wc.Rate, wc.Duration = 50, 0
		wc.MaxRequests = 100
		if _, err := loadgen.Run(ctx, wc); err != nil {
			return rows, err
		}
		row := bench.Row{Suite: "serve", System: t.sys, Config: ServeConfig(route, so.TopK, so.QueriesPerRequest, so.Concurrency, so.Arrivals, so.P99, 0),
			Params: withRate(params, "max"), Unit: "requests/s", Note: note}
		for r := 0; r < o.Reps; r++ {
			fmt.Fprintf(progress, "peers: serve %s %s: rate search (p99 ≤ %v, steps of %v), rep %d/%d\n", route, t.sys, so.P99, so.Step, r+1, o.Reps)
			sr, err := loadgen.Search(ctx, loadgen.SearchConfig{
				Base: retrieveLoad(t.srv.url, route, qs, so, uint64(r+1)), Start: so.Start, Max: so.Max, P99: so.P99, Precision: so.Precision,
				MinRequests: so.MinRequests,
			}, func(st loadgen.Step) {
				fmt.Fprintf(progress, "  %8.1f req/s: p50 %6.1f ms p99 %7.1f ms ok %d/%d %s\n", st.Rate,
					float64(st.Result.P50)/1e6, float64(st.Result.P99)/1e6, st.Result.OK, st.Result.Sent, passWhy(st))
			})
			if err != nil {
				return rows, err
			}
			rp := rep(sr.BestResult, sr.Best)
			rp.Extra["steps"] = float64(len(sr.Steps))
			rp.Extra["bounded"] = b2f(sr.Bounded)
			row.Reps = append(row.Reps, rp)
			best[t.sys] = append(best[t.sys], sr.Best)
			if err := t.srv.alive(); err != nil {
				return rows, err
			}
		}
		rows = append(rows, row)
	}
	// Latency at one common rate: half the lower of the median maxima, so
	// both servers are measured below saturation on the same axes.
	common := math.Inf(1)
	for _, b := range best {
		slices.Sort(b)
		common = min(common, b[len(b)/2])
	}
	if common = math.Floor(common / 2); common >= 1 && !math.IsInf(common, 1) {
		for _, t := range targets {
			row := bench.Row{Suite: "serve", System: t.sys, Config: ServeConfig(route, so.TopK, so.QueriesPerRequest, so.Concurrency, so.Arrivals, so.P99, common),
				Params: withRate(params, common), Unit: "requests/s", Note: note}
			for r := 0; r < o.Reps; r++ {
				c := retrieveLoad(t.srv.url, route, qs, so, uint64(100+r))
				c.Rate = common
				c.Duration = 2 * so.Step
				res, err := loadgen.Run(ctx, c)
				if err != nil {
					return rows, err
				}
				fmt.Fprintf(progress, "peers: serve %s %s at %.0f req/s: p50 %.1f ms p99 %.1f ms errors %d\n", route, t.sys, common,
					float64(res.P50)/1e6, float64(res.P99)/1e6, res.Errors)
				row.Reps = append(row.Reps, rep(res, res.Throughput))
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// withRate is params with "rate": "max" for the rate search's row, the
// offered requests/s for a fixed-rate row (plots tell the rows apart by it).
func withRate(params map[string]any, rate any) map[string]any {
	p := maps.Clone(params)
	p["rate"] = rate
	return p
}

// alive reports an error when the server process has exited.
func (s *server) alive() error {
	select {
	case <-s.done:
		return fmt.Errorf("%w: %s exited during the run: %v\n%s", ErrPeer, s.name, s.err, s.log.tail())
	default:
		return nil
	}
}

func passWhy(st loadgen.Step) string {
	if st.Pass {
		return "pass"
	}
	return "fail: " + st.Why
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
