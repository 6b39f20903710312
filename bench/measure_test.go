package bench

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	hundred := make([]float64, 100)
	for i := range hundred {
		hundred[i] = float64(i + 1) // 1..100
	}
	for _, tc := range []struct {
		name   string
		sorted []float64
		p      float64
		want   float64
	}{
		{"empty", nil, 50, 0},
		{"one value", []float64{7}, 99, 7},
		{"median of 4 is the 2nd (nearest rank)", []float64{1, 2, 3, 4}, 50, 2},
		{"median of 5 is the 3rd", []float64{1, 2, 3, 4, 5}, 50, 3},
		{"p99 of 1..100 is 99, not the max", hundred, 99, 99},
		{"p100 is the max", hundred, 100, 100},
		{"p1 of 1..100 is 1", hundred, 1, 1},
		{"tiny p is the min", []float64{1, 2, 3}, 0.001, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestStatsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want Stats
	}{
		{"empty", nil, Stats{}},
		{"one", []float64{4}, Stats{Median: 4, Min: 4, Max: 4, N: 1}},
		{"odd count, unsorted", []float64{30, 10, 20}, Stats{Median: 20, Min: 10, Max: 30, Spread: 0.5, N: 3}},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, Stats{Median: 2.5, Min: 1, Max: 4, Spread: 0.6, N: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatsOf(tc.in); got != tc.want {
				t.Errorf("StatsOf(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestMeasureBudget(t *testing.T) {
	var calls []int
	rep, err := Measure(context.Background(), Budget{MinCalls: 5, MaxCalls: 5, Warmup: 2}, func(_ context.Context, i int) (int, error) {
		calls = append(calls, i)
		return 3, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two warm-up calls (0, 1), then five timed ones continuing the index.
	if want := []int{0, 1, 2, 3, 4, 5, 6}; len(calls) != len(want) || calls[2] != 2 || calls[6] != 6 {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if rep.Ops != 15 {
		t.Errorf("ops %d, want 15 (5 timed calls × 3; warm-up not counted)", rep.Ops)
	}
	if len(rep.Latencies) != 5 || rep.Throughput <= 0 || rep.P99ms < rep.P50ms {
		t.Errorf("rep %+v: want 5 latencies, throughput > 0, p99 >= p50", rep)
	}
}

func TestMeasureStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	rep, err := Measure(context.Background(), Budget{MinTime: time.Hour, MinCalls: 1}, func(_ context.Context, i int) (int, error) {
		if i == 3 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || rep.Ops != 3 {
		t.Errorf("err %v ops %d, want boom after 3 ops", err, rep.Ops)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Measure(ctx, Budget{MinTime: time.Hour}, func(context.Context, int) (int, error) { return 1, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err %v, want context.Canceled", err)
	}
}

func TestRepFromSamples(t *testing.T) {
	lat := make([]float64, 10_000)
	for i := range lat {
		lat[i] = float64(len(lat) - i) // descending: RepFrom sorts
	}
	r := RepFrom(100, time.Second, lat)
	if r.Throughput != 100 || r.P50ms != 5000 || r.P99ms != 9900 {
		t.Errorf("throughput %v p50 %v p99 %v, want 100, 5000, 9900", r.Throughput, r.P50ms, r.P99ms)
	}
	if len(r.Latencies) != MaxLatencySamples || r.Latencies[0] != 1 || r.Latencies[len(r.Latencies)-1] != 10_000 {
		t.Errorf("sample of %d from %v to %v, want %d from the min to the max", len(r.Latencies), r.Latencies[0], r.Latencies[len(r.Latencies)-1], MaxLatencySamples)
	}
}
