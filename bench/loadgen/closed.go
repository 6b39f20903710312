package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// ClosedConfig is a closed-loop run: Concurrency clients each send a
// request, wait for its answer and send the next, until Duration has
// passed. Latency runs from a request's send to its answer (the clients
// never queue), which is what a trainer's fixed pool of rollout workers
// sees; an overloaded server shows as lower throughput.
type ClosedConfig struct {
	// URL, Method, Body, ContentType, Check, Timeout and Client are as in
	// Config; Body is called concurrently here, with a request counter
	// that is unique across clients.
	URL         string
	Method      string
	Body        func(i int) []byte
	ContentType string
	Check       func(body []byte) error
	Timeout     time.Duration
	Client      *http.Client
	// Concurrency is the number of clients (> 0).
	Concurrency int
	// Duration bounds the run (> 0): no request is sent after it.
	Duration time.Duration
	// SampleLatencies is as in Config.
	SampleLatencies int
	// OnError, when set, is called (concurrently) with each failed
	// request's status and error, as it happens.
	OnError func(status int, err error)
}

// RunClosed runs cfg and returns what it measured (Rate and AchievedRate
// are 0: there is no schedule). Cancelling ctx stops the clients.
func RunClosed(ctx context.Context, cfg ClosedConfig) (Result, error) {
	switch {
	case cfg.URL == "":
		return Result{}, fmt.Errorf("%w: URL is empty", ErrConfig)
	case cfg.Concurrency <= 0:
		return Result{}, fmt.Errorf("%w: Concurrency %d, want > 0", ErrConfig, cfg.Concurrency)
	case cfg.Duration <= 0:
		return Result{}, fmt.Errorf("%w: Duration %v, want > 0", ErrConfig, cfg.Duration)
	case cfg.Timeout < 0 || cfg.SampleLatencies < 0:
		return Result{}, fmt.Errorf("%w: Timeout %v and SampleLatencies %d must be >= 0", ErrConfig, cfg.Timeout, cfg.SampleLatencies)
	}
	timeout, method, ctype, client, done := requestDefaults(cfg.Timeout, cfg.Method, cfg.ContentType, cfg.Client, cfg.Concurrency)
	defer done()
	var (
		mu   sync.Mutex
		next int
		res  Result
		lats []time.Duration
		wg   sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(cfg.Duration)
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for ctx.Err() == nil && time.Now().Before(end) {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				var body []byte
				if cfg.Body != nil {
					body = cfg.Body(i)
				}
				rctx, cancel := context.WithTimeout(ctx, timeout)
				t0 := time.Now()
				status, err := do(rctx, client, method, cfg.URL, ctype, body, cfg.Check)
				lat := time.Since(t0)
				cancel()
				mine = append(mine, lat)
				mu.Lock()
				res.Sent++
				if err == nil {
					res.OK++
				} else {
					res.Errors++
					if res.Statuses == nil {
						res.Statuses = map[int]int{}
					}
					res.Statuses[status]++
					if res.FirstError == "" {
						res.FirstError = err.Error()
					}
				}
				mu.Unlock()
				if err != nil && cfg.OnError != nil {
					cfg.OnError(status, err)
				}
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	slices.Sort(lats)
	res.P50, res.P95, res.P99 = Percentile(lats, 50), Percentile(lats, 95), Percentile(lats, 99)
	if len(lats) > 0 {
		res.Max = lats[len(lats)-1]
	}
	if res.Elapsed > 0 {
		res.Throughput = float64(res.OK) / res.Elapsed.Seconds()
	}
	res.Sample = sample(lats, cfg.SampleLatencies)
	return res, ctx.Err()
}
