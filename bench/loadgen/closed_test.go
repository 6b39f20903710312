package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestRunClosed: c clients never have more than c requests in flight,
// every request is counted once, failures by status with the first error,
// and latencies are those of the answers.
func TestRunClosed(t *testing.T) {
	var inflight, peak, n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); cur > p && !peak.CompareAndSwap(p, cur); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		if n.Add(1)%10 == 0 {
			http.Error(w, "no", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var onErr atomic.Int64
	res, err := RunClosed(context.Background(), ClosedConfig{URL: srv.URL, Concurrency: 4, Duration: 300 * time.Millisecond,
		Body: func(i int) []byte { return []byte("{}") }, OnError: func(int, error) { onErr.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > 4 {
		t.Errorf("peak %d requests in flight, want <= 4 clients", p)
	}
	if res.Sent != int(n.Load()) || res.OK+res.Errors != res.Sent || res.Errors != res.Statuses[503] || int64(res.Errors) != onErr.Load() {
		t.Errorf("sent %d (server saw %d), ok %d, errors %d by status %v, OnError %d", res.Sent, n.Load(), res.OK, res.Errors, res.Statuses, onErr.Load())
	}
	if res.Errors == 0 || res.FirstError == "" || res.P50 < 5*time.Millisecond || res.P99 < res.P50 || res.Throughput <= 0 {
		t.Errorf("result %+v: want some 503s with the first error, p50 >= 5ms", res)
	}
	for _, bad := range []ClosedConfig{{}, {URL: "x"}, {URL: "x", Concurrency: 1}, {URL: "x", Concurrency: 1, Duration: time.Second, Timeout: -1}} {
		if _, err := RunClosed(context.Background(), bad); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", bad, err)
		}
	}
}
