package loadgen

import (
	"context"
	"fmt"
	"math"
	"time"
)

// SearchConfig is a rate search: the highest arrival rate whose run keeps
// p99 ≤ P99, errors ≤ MaxErrorRate, and whose arrivals kept to the
// schedule. Rates double from Start until a run fails (or halve while the
// first runs fail), then bisect geometrically between the best passing and
// the lowest failing rate until they are within Precision of each other.
type SearchConfig struct {
	// Base is the run at each step; its Rate is set by the search, and
	// MaxRequests/Duration bound each step (keep them short: ~1-3 s).
	Base Config
	// Start is the first rate tried (requests/s); 0 means 16.
	Start float64
	// Max caps the rate (requests/s); 0 means 1,000,000. A search that
	// passes at Max reports Max with Bounded false.
	Max float64
	// P99 is the latency bound; 0 means 100 ms (the serve target).
	P99 time.Duration
	// MaxErrorRate is the fraction of failed requests allowed (0 = none).
	MaxErrorRate float64
	// MinAchieved is the fraction of Rate the arrivals must reach; 0 means
	// 0.9 (below it the generator, not the server, was the bottleneck).
	MinAchieved float64
	// Precision ends the bisection when failing/passing ≤ 1+Precision;
	// 0 means 0.1.
	Precision float64
	// MaxSteps bounds the number of runs; 0 means 14 (retries included).
	MaxSteps int
	// MinRequests stretches a Duration-bounded step at a low rate to at
	// least this many arrivals, so that its p99 is not just its maximum
	// (with 200, p99 is the third-largest latency); 0 means 200, <0 none.
	MinRequests int
	// Retries re-runs a failing rate this many times before taking the
	// failure, so that one stall of a shared machine (a p99 spike from a
	// neighbour's burst) does not end the search at a rate far below the
	// server's; a rate passes when any of its runs passes. 0 means 1; <0
	// means none.
	Retries int
}

func (sc *SearchConfig) defaults() {
	if sc.Start == 0 {
		sc.Start = 16
	}
	if sc.Max == 0 {
		sc.Max = 1e6
	}
	if sc.P99 == 0 {
		sc.P99 = 100 * time.Millisecond
	}
	if sc.MinAchieved == 0 {
		sc.MinAchieved = 0.9
	}
	if sc.Precision == 0 {
		sc.Precision = 0.1
	}
	if sc.MaxSteps == 0 {
		sc.MaxSteps = 14
	}
	if sc.Retries == 0 {
		sc.Retries = 1
	}
	if sc.MinRequests == 0 {
		sc.MinRequests = 200
	}
}

// Validate reports the first bad field (after defaults).
func (sc *SearchConfig) Validate() error {
	switch {
	case !(sc.Start > 0) || math.IsInf(sc.Start, 0):
		return fmt.Errorf("%w: Start %v must be a positive finite rate", ErrConfig, sc.Start)
	case !(sc.Max >= sc.Start) || math.IsInf(sc.Max, 0):
		return fmt.Errorf("%w: Max %v must be a finite rate ≥ Start %v", ErrConfig, sc.Max, sc.Start)
	case sc.P99 <= 0:
		return fmt.Errorf("%w: P99 %v must be positive", ErrConfig, sc.P99)
	case sc.MaxErrorRate < 0 || sc.MaxErrorRate >= 1:
		return fmt.Errorf("%w: MaxErrorRate %v must be in [0, 1)", ErrConfig, sc.MaxErrorRate)
	case sc.MinAchieved < 0 || sc.MinAchieved > 1:
		return fmt.Errorf("%w: MinAchieved %v must be in [0, 1]", ErrConfig, sc.MinAchieved)
	case !(sc.Precision > 0):
		return fmt.Errorf("%w: Precision %v must be positive", ErrConfig, sc.Precision)
	case sc.MaxSteps < 1:
		return fmt.Errorf("%w: MaxSteps %d must be ≥ 1", ErrConfig, sc.MaxSteps)
	}
	c := sc.Base
	c.Rate = sc.Start
	return c.Validate()
}

// Step is one run of a search.
type Step struct {
	Rate   float64
	Result Result
	Pass   bool
	// Why says what failed ("" when Pass).
	Why string
}

// SearchResult is the outcome of a rate search.
type SearchResult struct {
	// Best is the highest passing rate (requests/s); 0 when none passed.
	Best float64
	// BestResult is the run at Best.
	BestResult Result
	// Bounded is true when some rate failed above Best (so Best is within
	// Precision of the limit); false when Max passed or steps ran out first.
	Bounded bool
	// Steps are the runs in order.
	Steps []Step
}

// Judge says whether r passes sc's bounds, and if not why.
func (sc *SearchConfig) Judge(r Result) (bool, string) {
	switch {
	case r.Sent == 0:
		return false, "no request sent"
	case float64(r.Errors) > sc.MaxErrorRate*float64(r.Sent):
		return false, fmt.Sprintf("%d of %d requests failed (first: %s)", r.Errors, r.Sent, r.FirstError)
	case r.P99 > sc.P99:
		return false, fmt.Sprintf("p99 %v > %v", r.P99.Round(time.Microsecond), sc.P99)
	case r.AchievedRate < sc.MinAchieved*r.Rate:
		return false, fmt.Sprintf("arrivals reached %.1f/s of %.1f/s", r.AchievedRate, r.Rate)
	}
	return true, ""
}

// Search runs the rate search against sc.Base.URL. progress, when set,
// sees each step as it ends. Errors: ErrConfig for a bad config; ctx's error
// (with the steps so far) when cancelled.
func Search(ctx context.Context, sc SearchConfig, progress func(Step)) (SearchResult, error) {
	sc.defaults()
	if err := sc.Validate(); err != nil {
		return SearchResult{}, err
	}
	return search(ctx, sc, func(ctx context.Context, rate float64) (Result, error) {
		c := sc.Base
		c.Rate = rate
		if c.Duration > 0 && sc.MinRequests > 0 {
			c.Duration = max(c.Duration, time.Duration(float64(sc.MinRequests)/rate*float64(time.Second)))
		}
		return Run(ctx, c)
	}, progress)
}

// search is Search over any measurement (tests drive it with a model of
// a server).
func search(ctx context.Context, sc SearchConfig, measure func(context.Context, float64) (Result, error), progress func(Step)) (SearchResult, error) {
	var out SearchResult
	lo, hi := 0.0, math.Inf(1) // best pass, lowest fail
	floor := sc.Start / 1024
	rate := sc.Start
	tries := 0 // failed runs at rate so far
	for len(out.Steps) < sc.MaxSteps {
		res, err := measure(ctx, rate)
		if err != nil {
			return out, err
		}
		res.Rate = rate
		pass, why := sc.Judge(res)
		st := Step{Rate: rate, Result: res, Pass: pass, Why: why}
		out.Steps = append(out.Steps, st)
		if progress != nil {
			progress(st)
		}
		if !pass && tries < max(sc.Retries, 0) {
			tries++
			continue
		}
		tries = 0
		if pass {
			lo = rate
			out.Best, out.BestResult = rate, res
		} else {
			hi = rate
		}
		switch {
		case math.IsInf(hi, 1):
			if rate >= sc.Max {
				return out, nil
			}
			rate = min(2*rate, sc.Max)
		case lo == 0:
			if rate/2 < floor {
				out.Bounded = true
				return out, nil
			}
			rate /= 2
		default:
			if hi/lo <= 1+sc.Precision {
				out.Bounded = true
				return out, nil
			}
			rate = math.Sqrt(lo * hi)
		}
	}
	out.Bounded = !math.IsInf(hi, 1) && lo > 0 && hi/lo <= 1+sc.Precision
	return out, nil
}
