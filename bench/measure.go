package bench

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/rlsearch/rlsearch/internal/procstat"
)

// MaxLatencySamples bounds Rep.Latencies: a reservoir sample of at most this
// many per-call latencies is kept for the CDF plots (the percentiles are
// computed from every call).
const MaxLatencySamples = 2000

// Budget bounds one repetition of a measurement: the call loop runs until
// MinTime has passed and at least MinCalls calls were made, but stops at
// MaxCalls calls (0 = no bound) even before MinTime.
type Budget struct {
	MinTime  time.Duration
	MinCalls int
	MaxCalls int
	// Warmup calls run first, untimed (caches, JIT-free Go still has cold
	// pages and lazily built tables).
	Warmup int
}

// Measure runs fn in a loop as Budget b says and returns the repetition:
// throughput = the sum of the ops fn reports / the wall time, latency
// percentiles (ms) over the calls (one call may be a whole batch: then the
// latency is the batch's), up to MaxLatencySamples sampled latencies, and
// the process's CPU time over the timed calls (Rep.CPU).
// fn gets the call index from 0 (warm-up calls included, so the timed
// calls continue the sequence). The first error stops the loop and is
// returned with the repetition measured so far. ctx is checked between
// calls. Not safe for concurrent use of one fn unless fn is.
func Measure(ctx context.Context, b Budget, fn func(ctx context.Context, i int) (ops int, err error)) (Rep, error) {
	if b.MinCalls < 1 {
		b.MinCalls = 1
	}
	for i := 0; i < b.Warmup; i++ {
		if err := ctx.Err(); err != nil {
			return Rep{}, err
		}
		if _, err := fn(ctx, i); err != nil {
			return Rep{}, err
		}
	}
	lat := make([]float64, 0, 1024)
	var ops int64
	cpu0 := procstat.SelfCPU()
	start := time.Now()
	var err error
	for i := 0; ; i++ {
		if b.MaxCalls > 0 && i >= b.MaxCalls {
			break
		}
		if i >= b.MinCalls && time.Since(start) >= b.MinTime {
			break
		}
		if err = ctx.Err(); err != nil {
			break
		}
		t0 := time.Now()
		n, e := fn(ctx, b.Warmup+i)
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/1e6)
		if e != nil {
			err = e
			break
		}
		ops += int64(n)
	}
	el := time.Since(start)
	r := RepFrom(ops, el, lat)
	if c := procstat.SelfCPU(); c > 0 {
		r.CPU = c - cpu0
	}
	return r, err
}

// RepFrom builds a repetition from ops done in elapsed and the per-call
// latencies in ms (reordered in place): throughput ops/s, nearest-rank
// p50/p95/p99, and a seeded reservoir sample of the latencies.
func RepFrom(ops int64, elapsed time.Duration, latMs []float64) Rep {
	r := Rep{Ops: ops, Elapsed: elapsed}
	if elapsed > 0 {
		r.Throughput = float64(ops) / elapsed.Seconds()
	}
	if len(latMs) > 0 {
		slices.Sort(latMs)
		r.P50ms = Percentile(latMs, 50)
		r.P95ms = Percentile(latMs, 95)
		r.P99ms = Percentile(latMs, 99)
		r.Latencies = sample(latMs, MaxLatencySamples)
	}
	return r
}

// sample returns at most n of the ascending values, evenly spaced by rank
// (so the sample's CDF follows the full one), ascending.
func sample(sorted []float64, n int) []float64 {
	if len(sorted) <= n {
		return slices.Clone(sorted)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = sorted[i*len(sorted)/n]
	}
	out[n-1] = sorted[len(sorted)-1]
	return out
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// ascending values: the smallest value with at least p% of the values at or
// below it; 0 for no values.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	r := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(r, 1), len(sorted))-1]
}

// Stats summarizes the throughputs of a row's repetitions.
type Stats struct {
	Median, Min, Max float64
	// Spread is (Max-Min)/2/Median as a fraction (0 for one repetition).
	Spread float64
	N      int
}

// ThroughputStats returns the median, min and max throughput of r.Reps.
func (r Row) ThroughputStats() Stats {
	return StatsOf(r.values(func(p Rep) float64 { return p.Throughput }))
}

// MedianOf returns the median over the repetitions of the value f picks.
func (r Row) MedianOf(f func(Rep) float64) float64 {
	return StatsOf(r.values(f)).Median
}

// ExtraMedian returns the median of Extra[key] over the repetitions that
// have it, and whether any has.
func (r Row) ExtraMedian(key string) (float64, bool) {
	var v []float64
	for _, p := range r.Reps {
		if x, ok := p.Extra[key]; ok {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return StatsOf(v).Median, true
}

// CPUPerOp returns the median over the repetitions that measured CPU time
// of Rep.CPU / Rep.Ops in microseconds, and whether any did.
func (r Row) CPUPerOp() (float64, bool) {
	var v []float64
	for _, p := range r.Reps {
		if p.CPU > 0 && p.Ops > 0 {
			v = append(v, float64(p.CPU.Nanoseconds())/1e3/float64(p.Ops))
		}
	}
	if len(v) == 0 {
		return 0, false
	}
	return StatsOf(v).Median, true
}

// Key identifies the row within a report: suite, system and config.
func (r Row) Key() string { return r.Suite + "\x00" + r.System + "\x00" + r.Config }

// AllLatencies returns the sampled latencies of every repetition, ascending.
func (r Row) AllLatencies() []float64 {
	var out []float64
	for _, p := range r.Reps {
		out = append(out, p.Latencies...)
	}
	slices.Sort(out)
	return out
}

func (r Row) values(f func(Rep) float64) []float64 {
	v := make([]float64, len(r.Reps))
	for i, p := range r.Reps {
		v[i] = f(p)
	}
	return v
}

// StatsOf summarizes values (not modified); the median of an even count is
// the mean of the two middle values.
func StatsOf(values []float64) Stats {
	if len(values) == 0 {
		return Stats{}
	}
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	s := Stats{Median: med, Min: v[0], Max: v[n-1], N: n}
	if med != 0 {
		s.Spread = (s.Max - s.Min) / 2 / math.Abs(med)
	}
	return s
}
