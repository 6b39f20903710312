package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The bounds on measured times below are deliberately loose (the machine is
// shared): they check that the generator measures from the schedule and
// counts what it should, not how fast anything is.

func TestValidate(t *testing.T) {
	ok := Config{URL: "http://x", Rate: 10, MaxRequests: 5}
	tests := []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"ok", func(*Config) {}, ""},
		{"no url", func(c *Config) { c.URL = "" }, "URL"},
		{"zero rate", func(c *Config) { c.Rate = 0 }, "Rate"},
		{"nan rate", func(c *Config) { c.Rate = math.NaN() }, "Rate"},
		{"inf rate", func(c *Config) { c.Rate = math.Inf(1) }, "Rate"},
		{"arrivals", func(c *Config) { c.Arrivals = "bursty" }, "Arrivals"},
		{"concurrency", func(c *Config) { c.Concurrency = -1 }, "Concurrency"},
		{"unbounded", func(c *Config) { c.MaxRequests = 0 }, "bounds"},
		{"timeout", func(c *Config) { c.Timeout = -time.Second }, "Timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate() = %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	tests := []struct {
		vals []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{ms(1, 2, 3, 4), 51, 3 * time.Millisecond},
		{ms(1, 2, 3, 4), 100, 4 * time.Millisecond},
		{ms(hundred...), 99, 99 * time.Millisecond},
		{ms(hundred...), 95, 95 * time.Millisecond},
		{ms(hundred...), 0.1, 1 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := Percentile(tc.vals, tc.p); got != tc.want {
			t.Errorf("Percentile(%d values, %v) = %v, want %v (nearest rank)", len(tc.vals), tc.p, got, tc.want)
		}
	}
}

func TestSchedule(t *testing.T) {
	u := Schedule(Config{Rate: 50, Arrivals: Uniform, MaxRequests: 5}, 100)
	for i, d := range u {
		if want := time.Duration(i) * 20 * time.Millisecond; d != want {
			t.Fatalf("uniform arrival %d at %v, want %v", i, d, want)
		}
	}
	if len(u) != 5 {
		t.Fatalf("uniform: %d arrivals, want MaxRequests 5", len(u))
	}
	// Duration cuts the schedule: 1 s at 50/s uniform is offsets 0..980 ms.
	if d := Schedule(Config{Rate: 50, Arrivals: Uniform, Duration: time.Second}, 1000); len(d) != 50 {
		t.Fatalf("1 s at 50/s: %d arrivals, want 50", len(d))
	}
	// Poisson: fixed seed, same schedule; mean gap 1/Rate within 3% over 20k gaps
	// (standard error of the mean of exponentials: 1/sqrt(20000) = 0.7%).
	c := Config{Rate: 200, Seed: 7, MaxRequests: 20001}
	p, q := Schedule(c, 1<<20), Schedule(c, 1<<20)
	for i := range p {
		if p[i] != q[i] {
			t.Fatalf("Poisson schedule differs at %d for the same seed", i)
		}
		if i > 0 && p[i] < p[i-1] {
			t.Fatalf("arrivals out of order at %d", i)
		}
	}
	mean := p[len(p)-1].Seconds() / float64(len(p)-1)
	if math.Abs(mean*200-1) > 0.03 {
		t.Fatalf("Poisson mean gap %.5f s, want 1/200 s within 3%%", mean)
	}
	c.Seed = 8
	if r := Schedule(c, 10); r[1] == p[1] {
		t.Fatalf("different seeds gave the same gap")
	}
}

// slowServer answers after delay, counting requests and the most in flight.
type slowServer struct {
	delay              time.Duration
	n, inflight, peak  atomic.Int64
	fail               func(i int64) int // status for request i (0 = 200)
	mu                 sync.Mutex
	serial             bool // one request at a time (a server of capacity 1/delay)
	bodies             []string
	keepBodies         bool
	answer             string
	answeredBeforeLock atomic.Int64
}

func (s *slowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := s.n.Add(1) - 1
	cur := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		p := s.peak.Load()
		if cur <= p || s.peak.CompareAndSwap(p, cur) {
			break
		}
	}
	if s.keepBodies {
		buf := new(strings.Builder)
		fmt.Fprint(buf, r.Header.Get("Content-Type"), " ")
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		buf.Write(b[:n])
		s.mu.Lock()
		s.bodies = append(s.bodies, buf.String())
		s.mu.Unlock()
	}
	if s.serial {
		s.mu.Lock()
		time.Sleep(s.delay)
		s.mu.Unlock()
	} else {
		time.Sleep(s.delay)
	}
	if s.fail != nil {
		if st := s.fail(i); st != 0 {
			w.WriteHeader(st)
			fmt.Fprint(w, `{"error":"injected"}`)
			return
		}
	}
	ans := s.answer
	if ans == "" {
		ans = `{"ok":true}`
	}
	fmt.Fprint(w, ans)
}

func TestRunRateAndLatency(t *testing.T) {
	s := &slowServer{delay: 5 * time.Millisecond, keepBodies: true}
	ts := httptest.NewServer(s)
	defer ts.Close()
	res, err := Run(context.Background(), Config{
		URL: ts.URL, Rate: 100, Arrivals: Uniform, MaxRequests: 50, Concurrency: 8,
		Body: func(i int) []byte { return fmt.Appendf(nil, `{"i":%d}`, i) }, SampleLatencies: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 50 || res.OK != 50 || res.Errors != 0 || s.n.Load() != 50 {
		t.Fatalf("sent %d ok %d errors %d, server saw %d; want 50/50/0/50", res.Sent, res.OK, res.Errors, s.n.Load())
	}
	// 50 uniform arrivals at 100/s span 490 ms; the generator must keep to it.
	if res.AchievedRate < 70 || res.AchievedRate > 100.001 {
		t.Errorf("achieved rate %.1f/s, want ≈100/s (open loop keeps to the schedule)", res.AchievedRate)
	}
	if res.Elapsed < 490*time.Millisecond {
		t.Errorf("elapsed %v shorter than the 490 ms schedule", res.Elapsed)
	}
	if res.P50 < 5*time.Millisecond || res.P99 < res.P95 || res.P95 < res.P50 || res.Max < res.P99 {
		t.Errorf("percentiles p50 %v p95 %v p99 %v max %v: want 5 ms ≤ p50 ≤ p95 ≤ p99 ≤ max", res.P50, res.P95, res.P99, res.Max)
	}
	if len(res.Sample) != 10 || res.Sample[9] != res.Max {
		t.Errorf("sample %v: want 10 sorted values ending at max %v", res.Sample, res.Max)
	}
	if !strings.HasPrefix(s.bodies[0], `application/json {"i":`) {
		t.Errorf("server got %q, want a JSON body with its content type", s.bodies[0])
	}
}

func TestRunCountsErrors(t *testing.T) {
	s := &slowServer{fail: func(i int64) int {
		if i%3 == 0 {
			return http.StatusInternalServerError
		}
		if i%5 == 1 {
			return http.StatusBadRequest
		}
		return 0
	}}
	ts := httptest.NewServer(s)
	defer ts.Close()
	res, err := Run(context.Background(), Config{URL: ts.URL, Rate: 500, MaxRequests: 30, Concurrency: 1, Arrivals: Uniform})
	if err != nil {
		t.Fatal(err)
	}
	// Concurrency 1 keeps the server's count in arrival order: i%3==0 → 10
	// of 30; i%5==1 and i%3!=0 → 1,11,16,26 (6 and 21 are multiples of 3).
	if res.Errors != 14 || res.Statuses[500] != 10 || res.Statuses[400] != 4 || res.OK != 16 {
		t.Fatalf("errors %d statuses %v ok %d; want 14 = 10×500 + 4×400, 16 ok", res.Errors, res.Statuses, res.OK)
	}
	if !strings.Contains(res.FirstError, "status 500") {
		t.Errorf("first error %q, want the 500 of request 0", res.FirstError)
	}

	// Check rejects a 200 answer of the wrong shape.
	s2 := &slowServer{answer: `{"result":[]}`}
	ts2 := httptest.NewServer(s2)
	defer ts2.Close()
	res, err = Run(context.Background(), Config{URL: ts2.URL, Rate: 500, MaxRequests: 5,
		Check: func(b []byte) error {
			if !strings.Contains(string(b), `"document"`) {
				return errors.New("no document")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 5 || !strings.Contains(res.FirstError, "bad answer: no document") {
		t.Fatalf("errors %d first %q, want 5 bad answers", res.Errors, res.FirstError)
	}
}

func TestRunTimeout(t *testing.T) {
	s := &slowServer{delay: 300 * time.Millisecond}
	ts := httptest.NewServer(s)
	defer ts.Close()
	res, err := Run(context.Background(), Config{URL: ts.URL, Rate: 100, MaxRequests: 4, Timeout: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 4 || res.Statuses[0] != 4 || res.OK != 0 {
		t.Fatalf("errors %d statuses %v ok %d, want 4 timeouts (status 0)", res.Errors, res.Statuses, res.OK)
	}
	if res.P99 < 30*time.Millisecond || res.P99 > 290*time.Millisecond {
		t.Errorf("p99 %v: a timed-out request counts its 30 ms wait, not the server's 300 ms", res.P99)
	}
}

func TestRunConcurrencyCapCountsWaiting(t *testing.T) {
	s := &slowServer{delay: 20 * time.Millisecond}
	ts := httptest.NewServer(s)
	defer ts.Close()
	// 20 arrivals in 20 ms with 2 slots of 20 ms each: the last waits ~180 ms.
	res, err := Run(context.Background(), Config{URL: ts.URL, Rate: 1000, Arrivals: Uniform, MaxRequests: 20, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p := s.peak.Load(); p > 2 {
		t.Fatalf("server saw %d requests in flight, cap is 2", p)
	}
	if res.OK != 20 {
		t.Fatalf("ok %d, want 20", res.OK)
	}
	if res.Max < 150*time.Millisecond {
		t.Fatalf("max latency %v: a request queued behind the cap must count its wait (want ≥ 150 ms)", res.Max)
	}
}

func TestRunDurationAndCancel(t *testing.T) {
	s := &slowServer{}
	ts := httptest.NewServer(s)
	defer ts.Close()
	res, err := Run(context.Background(), Config{URL: ts.URL, Rate: 200, Arrivals: Uniform, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 20 {
		t.Fatalf("100 ms at 200/s uniform sent %d, want 20", res.Sent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err = Run(ctx, Config{URL: ts.URL, Rate: 50, Arrivals: Uniform, MaxRequests: 1000})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the context's deadline", err)
	}
	if res.Sent < 1 || res.Sent > 10 {
		t.Fatalf("cancelled after 100 ms at 50/s: sent %d, want a handful", res.Sent)
	}
}

// model answers like a server of capacity cap requests/s: p99 10 ms below
// it, 1 s above it, and records the rates tried.
func model(capacity float64, tried *[]float64) func(context.Context, float64) (Result, error) {
	return func(_ context.Context, rate float64) (Result, error) {
		*tried = append(*tried, rate)
		r := Result{Rate: rate, Sent: 100, OK: 100, AchievedRate: rate, P99: 10 * time.Millisecond}
		if rate > capacity {
			r.P99 = time.Second
		}
		return r, nil
	}
}

func TestSearchConverges(t *testing.T) {
	tests := []struct {
		name     string
		capacity float64
		start    float64
		max      float64
		bounded  bool
	}{
		{"doubling then bisection", 137, 16, 0, true},
		{"start above capacity halves", 3.3, 16, 0, true},
		{"exact power of two", 64, 16, 0, true},
		{"max passes", 1e9, 16, 1000, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := SearchConfig{Base: Config{URL: "http://x", MaxRequests: 1}, Start: tc.start, Max: tc.max, Retries: -1}
			sc.defaults()
			var tried []float64
			res, err := search(context.Background(), sc, model(tc.capacity, &tried), nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Bounded != tc.bounded {
				t.Fatalf("bounded %v, want %v (tried %v)", res.Bounded, tc.bounded, tried)
			}
			if !tc.bounded {
				if res.Best != tc.max {
					t.Fatalf("best %v, want Max %v", res.Best, tc.max)
				}
				return
			}
			if res.Best > tc.capacity || res.Best < tc.capacity/1.1 {
				t.Fatalf("best %.2f, want within 10%% below capacity %v (tried %v)", res.Best, tc.capacity, tried)
			}
			if len(tried) > sc.MaxSteps || len(res.Steps) != len(tried) {
				t.Fatalf("%d steps (%d recorded), max %d", len(tried), len(res.Steps), sc.MaxSteps)
			}
		})
	}
}

// TestSearchRetriesStalls: one failed run at a rate the server sustains
// (a stall) must not end the search there.
func TestSearchRetriesStalls(t *testing.T) {
	sc := SearchConfig{Base: Config{URL: "http://x", MaxRequests: 1}, MaxSteps: 30}
	sc.defaults()
	var tried []float64
	inner := model(500, &tried)
	stalled := map[float64]bool{}
	stall := func(ctx context.Context, rate float64) (Result, error) {
		r, err := inner(ctx, rate)
		if rate == 32 && !stalled[rate] { // the first run at 32/s stalls
			stalled[rate] = true
			r.P99 = 2 * time.Second
		}
		return r, err
	}
	res, err := search(context.Background(), sc, stall, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best < 500/1.1 || res.Best > 500 || tried[1] != 32 || tried[2] != 32 {
		t.Fatalf("best %.1f after %v: want 32 retried once, then ≈500", res.Best, tried)
	}
	// Without retries the stall decides.
	sc.Retries = -1
	tried, stalled = nil, map[float64]bool{}
	if res, _ = search(context.Background(), sc, stall, nil); res.Best >= 32 {
		t.Fatalf("without retries best %.1f: want below the stalled 32/s", res.Best)
	}
}

func TestSearchNonePasses(t *testing.T) {
	sc := SearchConfig{Base: Config{URL: "http://x", MaxRequests: 1}, Retries: -1}
	sc.defaults()
	var tried []float64
	res, err := search(context.Background(), sc, model(0.001, &tried), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Best != 0 || !res.Bounded || len(tried) != 11 {
		t.Fatalf("best %v bounded %v after %d steps, want 0, true after halving 16 → 1/64 (11 steps)", res.Best, res.Bounded, len(tried))
	}
}

func TestJudge(t *testing.T) {
	sc := SearchConfig{MaxErrorRate: 0.01}
	sc.defaults()
	base := Result{Rate: 100, Sent: 200, OK: 200, AchievedRate: 99, P99: 50 * time.Millisecond}
	tests := []struct {
		name string
		edit func(*Result)
		why  string
	}{
		{"pass", func(*Result) {}, ""},
		{"p99", func(r *Result) { r.P99 = 101 * time.Millisecond }, "p99"},
		{"errors over 1%", func(r *Result) { r.Errors, r.FirstError = 3, "status 503" }, "3 of 200 requests failed (first: status 503)"},
		{"errors within 1%", func(r *Result) { r.Errors = 2 }, ""},
		{"generator behind", func(r *Result) { r.AchievedRate = 70 }, "arrivals reached"},
		{"nothing sent", func(r *Result) { r.Sent = 0 }, "no request"},
	}
	for _, tc := range tests {
		r := base
		tc.edit(&r)
		pass, why := sc.Judge(r)
		if pass != (tc.why == "") || !strings.Contains(why, tc.why) {
			t.Errorf("%s: Judge = %v %q, want pass=%v why containing %q", tc.name, pass, why, tc.why == "", tc.why)
		}
	}
}

// TestSearchAgainstServer runs the real search against a server that
// handles one request at a time in 25 ms (capacity 40/s). The p99 bound is
// wide (400 ms) so that scheduling stalls of a loaded machine (tens of ms)
// do not decide the outcome; the backlog above capacity does.
func TestSearchAgainstServer(t *testing.T) {
	s := &slowServer{delay: 25 * time.Millisecond, serial: true}
	ts := httptest.NewServer(s)
	defer ts.Close()
	var steps []string
	res, err := Search(context.Background(), SearchConfig{
		Base:  Config{URL: ts.URL, Arrivals: Uniform, Duration: time.Second, Concurrency: 64},
		Start: 8, P99: 400 * time.Millisecond, Precision: 0.25, MinRequests: -1,
	}, func(st Step) {
		steps = append(steps, fmt.Sprintf("%.0f/s p99 %v pass=%v", st.Rate, st.Result.P99, st.Pass))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steps: %s", strings.Join(steps, "; "))
	if !res.Bounded || res.Best < 10 || res.Best > 64 {
		t.Fatalf("best %.1f/s bounded %v; want a bounded rate near the 40/s capacity", res.Best, res.Bounded)
	}
}
