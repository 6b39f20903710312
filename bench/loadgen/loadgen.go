package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Arrival processes.
const (
	// Uniform starts request i at i/Rate seconds.
	Uniform = "uniform"
	// Poisson draws exponential gaps of mean 1/Rate seconds from Seed.
	Poisson = "poisson"
)

// Sentinel errors.
var (
	ErrConfig = errors.New("loadgen: bad config")
)

// Config is one fixed-rate run against one URL.
type Config struct {
	// URL receives every request (e.g. http://127.0.0.1:8000/retrieve).
	URL string
	// Method is the HTTP method; "" means POST.
	Method string
	// Body returns the body of request i (i counts from 0); nil sends none.
	// Called from one goroutine, in order.
	Body func(i int) []byte
	// ContentType of the body; "" means application/json.
	ContentType string
	// Check, when set, validates a 2xx response body; an error counts the
	// request as failed (e.g. a /retrieve answer of the wrong shape).
	// Called concurrently.
	Check func(body []byte) error

	// Rate is the arrival rate in requests per second (> 0).
	Rate float64
	// Arrivals is Uniform or Poisson; "" means Poisson.
	Arrivals string
	// Seed of the Poisson gaps (fixed seeds give the same schedule).
	Seed uint64
	// Concurrency caps the requests in flight (> 0; 0 means 64). Arrivals
	// beyond the cap wait for a slot, and their wait counts as latency.
	Concurrency int
	// MaxRequests bounds the count (0: no bound; then Duration must be set).
	MaxRequests int
	// Duration bounds the arrival window: no request is scheduled after it
	// (0: no bound; then MaxRequests must be set).
	Duration time.Duration
	// Timeout per request, from its scheduled arrival; 0 means 10 s. A
	// request past it is cancelled and counted as an error.
	Timeout time.Duration
	// Client sends the requests; nil uses a client whose transport keeps
	// Concurrency idle connections to the host.
	Client *http.Client
	// SampleLatencies keeps at most this many latencies in Result.Sample
	// (evenly strided over the sorted set); 0 keeps none.
	SampleLatencies int
}

// Validate reports the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.URL == "":
		return fmt.Errorf("%w: URL is empty", ErrConfig)
	case !(c.Rate > 0) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("%w: Rate %v must be a positive finite number of requests per second", ErrConfig, c.Rate)
	case c.Arrivals != "" && c.Arrivals != Uniform && c.Arrivals != Poisson:
		return fmt.Errorf("%w: Arrivals %q is neither %q nor %q", ErrConfig, c.Arrivals, Uniform, Poisson)
	case c.Concurrency < 0:
		return fmt.Errorf("%w: Concurrency %d is negative", ErrConfig, c.Concurrency)
	case c.MaxRequests < 0:
		return fmt.Errorf("%w: MaxRequests %d is negative", ErrConfig, c.MaxRequests)
	case c.Duration < 0:
		return fmt.Errorf("%w: Duration %v is negative", ErrConfig, c.Duration)
	case c.MaxRequests == 0 && c.Duration == 0:
		return fmt.Errorf("%w: neither MaxRequests nor Duration bounds the run", ErrConfig)
	case c.Timeout < 0:
		return fmt.Errorf("%w: Timeout %v is negative", ErrConfig, c.Timeout)
	case c.SampleLatencies < 0:
		return fmt.Errorf("%w: SampleLatencies %d is negative", ErrConfig, c.SampleLatencies)
	}
	return nil
}

// Result of one fixed-rate run.
type Result struct {
	// Rate is the configured arrival rate (requests/s).
	Rate float64
	// Sent counts requests started; OK those answered 2xx (and passing
	// Check); Errors the rest (non-2xx, transport errors, timeouts, bad bodies).
	Sent, OK, Errors int
	// Statuses counts failed requests by HTTP status (0 = no response).
	Statuses map[int]int
	// FirstError is the text of the first failure, for the log.
	FirstError string
	// Elapsed runs from the first scheduled arrival to the last completion.
	Elapsed time.Duration
	// AchievedRate is Rate × (scheduled span / actual span) of the
	// dispatches (requests/s): Rate when every request left on time, below
	// it when the generator or the concurrency cap fell behind the schedule.
	AchievedRate float64
	// Throughput is OK / Elapsed (requests/s).
	Throughput float64
	// Latency percentiles (nearest rank) over all requests, failed ones
	// included (a timeout counts as its full wait).
	P50, P95, P99, Max time.Duration
	// Sample holds at most Config.SampleLatencies sorted latencies.
	Sample []time.Duration
}

// Percentile returns the nearest-rank p-th percentile (0 < p ≤ 100) of
// sorted: the smallest value with at least p% of the values at or below it.
// It returns 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	r := int(math.Ceil(p / 100 * float64(len(sorted))))
	r = min(max(r, 1), len(sorted))
	return sorted[r-1]
}

// Schedule returns the arrival offsets of cfg (validated), at most limit
// of them when cfg has no MaxRequests (limit guards Duration-only runs).
func Schedule(cfg Config, limit int) []time.Duration {
	n := cfg.MaxRequests
	if n == 0 || n > limit {
		n = limit
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	out := make([]time.Duration, 0, min(n, 1<<16))
	t := 0.0
	for i := 0; i < n; i++ {
		if cfg.Arrivals == Uniform {
			t = float64(i) / cfg.Rate
		} else if i > 0 {
			t += rng.ExpFloat64() / cfg.Rate
		}
		d := time.Duration(t * float64(time.Second))
		if cfg.Duration > 0 && d >= cfg.Duration {
			break
		}
		out = append(out, d)
	}
	return out
}

// Run sends the requests of cfg and waits for all of them (each bounded by
// Timeout). Cancelling ctx stops new arrivals and cancels those in flight;
// Run then returns what it measured with ctx's error.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	conc := cfg.Concurrency
	if conc == 0 {
		conc = 64
	}
	timeout, method, ctype, client, done := requestDefaults(cfg.Timeout, cfg.Method, cfg.ContentType, cfg.Client, conc)
	defer done()
	// A Duration-only run at rate r schedules about r·Duration arrivals.
	limit := 1 << 24
	if cfg.MaxRequests == 0 {
		limit = int(cfg.Rate*cfg.Duration.Seconds()*2) + 16
	}
	sched := Schedule(cfg, limit)

	type outcome struct {
		lat    time.Duration
		status int
		err    error
	}
	outs := make([]outcome, len(sched))
	slots := make(chan struct{}, conc)
	var wg sync.WaitGroup
	start := time.Now()
	sent := 0
	var lastDispatch, lastSched time.Duration
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
dispatch:
	for i, at := range sched {
		if wait := time.Until(start.Add(at)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				break dispatch
			case <-timer.C:
			}
		}
		due := start.Add(at)
		var body []byte
		if cfg.Body != nil {
			body = cfg.Body(i)
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break dispatch
		}
		sent++
		lastDispatch, lastSched = time.Since(start), at
		wg.Add(1)
		go func(i int, due time.Time, body []byte) {
			defer wg.Done()
			defer func() { <-slots }()
			rctx, cancel := context.WithDeadline(ctx, due.Add(timeout))
			defer cancel()
			status, err := do(rctx, client, method, cfg.URL, ctype, body, cfg.Check)
			outs[i] = outcome{lat: time.Since(due), status: status, err: err}
		}(i, due, body)
	}
	wg.Wait()
	elapsed := time.Since(start)

	res := Result{Rate: cfg.Rate, Sent: sent, Elapsed: elapsed}
	lats := make([]time.Duration, 0, sent)
	for _, o := range outs[:sent] {
		lats = append(lats, o.lat)
		if o.err == nil {
			res.OK++
			continue
		}
		res.Errors++
		if res.Statuses == nil {
			res.Statuses = map[int]int{}
		}
		res.Statuses[o.status]++
		if res.FirstError == "" {
			res.FirstError = o.err.Error()
		}
	}
	slices.Sort(lats)
	res.P50, res.P95, res.P99 = Percentile(lats, 50), Percentile(lats, 95), Percentile(lats, 99)
	if len(lats) > 0 {
		res.Max = lats[len(lats)-1]
	}
	if elapsed > 0 {
		res.Throughput = float64(res.OK) / elapsed.Seconds()
	}
	// Rate scaled by scheduled over actual span of the dispatches: exactly
	// Rate when every request left on time (whatever the Poisson draw),
	// lower when the generator or the concurrency cap held them back.
	switch {
	case sent > 1 && lastSched > 0 && lastDispatch > 0:
		res.AchievedRate = cfg.Rate * min(1, lastSched.Seconds()/lastDispatch.Seconds())
	case sent > 0:
		res.AchievedRate = cfg.Rate
	}
	res.Sample = sample(lats, cfg.SampleLatencies)
	return res, ctx.Err()
}

// requestDefaults applies the request defaults of Run and RunClosed: a
// 10 s timeout, POST, application/json, and (client nil) a client keeping
// conc idle connections, which done closes.
func requestDefaults(timeout time.Duration, method, ctype string, client *http.Client, conc int) (time.Duration, string, string, *http.Client, func()) {
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	if method == "" {
		method = http.MethodPost
	}
	if ctype == "" {
		ctype = "application/json"
	}
	done := func() {}
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConns = conc
		tr.MaxIdleConnsPerHost = conc
		client, done = &http.Client{Transport: tr}, tr.CloseIdleConnections
	}
	return timeout, method, ctype, client, done
}

// sample keeps at most n values of sorted, evenly strided, always the last.
func sample(sorted []time.Duration, n int) []time.Duration {
	if n <= 0 || len(sorted) == 0 {
		return nil
	}
	if len(sorted) <= n {
		return slices.Clone(sorted)
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = sorted[(i+1)*len(sorted)/n-1]
	}
	return out
}

// do sends one request and reads the whole answer. It returns the status
// (0 when none came) and an error for anything but a 2xx that passes check.
func do(ctx context.Context, client *http.Client, method, url, ctype string, body []byte, check func([]byte) error) (int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		snip := b
		if len(snip) > 200 {
			snip = snip[:200]
		}
		return resp.StatusCode, fmt.Errorf("status %d: %s", resp.StatusCode, snip)
	}
	if check != nil {
		if err := check(b); err != nil {
			return resp.StatusCode, fmt.Errorf("bad answer: %w", err)
		}
	}
	return resp.StatusCode, nil
}
