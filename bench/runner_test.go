package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeSuite has two cases whose repetitions record the global call order.
func fakeSuite(name string, order *[]string, failCase string) Suite {
	return Suite{Name: name, Setup: func(ctx context.Context, env *Env) ([]Case, func(), error) {
		var cases []Case
		for i, cfg := range []string{"a", "b"} {
			p := map[string]any{"batch": i + 1}
			cases = append(cases, Case{Config: cfg, Params: p, Unit: "ops/s", Threads: 1,
				Run: func(ctx context.Context) (Rep, error) {
					*order = append(*order, name+"/"+cfg)
					if cfg == failCase {
						return Rep{}, errors.New("case broke")
					}
					return Rep{Throughput: float64(10 * (i + 1)), Ops: 1}, nil
				}})
		}
		return cases, nil, nil
	}}
}

func TestRunRepMajorSkipsAndPeers(t *testing.T) {
	var order []string
	skipped := Suite{Name: "nogpu", Setup: func(context.Context, *Env) ([]Case, func(), error) {
		return nil, nil, fmt.Errorf("%w: no GPU", ErrSkip)
	}}
	peerCalls := 0
	RegisterPeer("fakepeer-1.0", []string{"one"}, func(ctx context.Context, suite string, o PeerOptions) ([]Row, error) {
		peerCalls++
		if len(o.Ours) != 2 || o.Ours[0].Config != "a" {
			t.Errorf("peer got ours %+v, want the suite's two rows", o.Ours)
		}
		return []Row{{Suite: suite, System: "fakepeer-1.0", Config: "a", Unit: "ops/s", Reps: []Rep{{Throughput: 5}}}}, nil
	})
	t.Cleanup(func() { peersMu.Lock(); peers = peers[:len(peers)-1]; peersMu.Unlock() })
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{Suites: []string{"one", "nogpu", "two"}, Reps: 2, MinTime: time.Millisecond, Peers: true, Progress: &log},
		[]Suite{fakeSuite("one", &order, ""), skipped, fakeSuite("two", &order, "b")})
	if err != nil {
		t.Fatal(err)
	}
	want := "one/a one/b one/a one/b two/a two/b two/a"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order %q, want rep-major %q (a failed case is not repeated)", got, want)
	}
	if peerCalls != 1 {
		t.Errorf("peer called %d times, want once (suite one only)", peerCalls)
	}
	var keys []string
	for _, r := range rep.Rows {
		keys = append(keys, fmt.Sprintf("%s/%s/%s×%d", r.Suite, r.System, r.Config, len(r.Reps)))
	}
	if got, want := strings.Join(keys, " "), "one/rlsearch/a×2 one/rlsearch/b×2 one/fakepeer-1.0/a×1 two/rlsearch/a×2"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	if len(rep.Skipped) != 2 || rep.Skipped[0].Suite != "nogpu" || !strings.Contains(rep.Skipped[0].Reason, "no GPU") ||
		rep.Skipped[1].Suite != "two" || !strings.Contains(rep.Skipped[1].Reason, "case broke") {
		t.Errorf("skipped %+v, want nogpu (no GPU) and two (case broke)", rep.Skipped)
	}
	if !strings.Contains(log.String(), "rep 2/2") || !strings.Contains(log.String(), "ETA") {
		t.Errorf("progress lack rep/ETA lines:\n%s", log.String())
	}
	if got := rep.Peer(rep.Rows[0]); len(got) != 1 || got[0].System != "fakepeer-1.0" {
		t.Errorf("Peer(one/a) = %+v, want the fake peer's row", got)
	}
}

func TestRunInterleaved(t *testing.T) {
	var order []string
	RegisterPeer("fakepeer-2.0", []string{"one"}, func(ctx context.Context, suite string, o PeerOptions) ([]Row, error) {
		order = append(order, fmt.Sprintf("peer(reps=%d,ours=%d)", o.Reps, len(o.Ours)))
		return []Row{{Suite: suite, System: "fakepeer-2.0", Config: "a", Unit: "ops/s", Reps: []Rep{{Throughput: float64(len(order))}}}}, nil
	})
	t.Cleanup(func() { peersMu.Lock(); peers = peers[:len(peers)-1]; peersMu.Unlock() })
	var log bytes.Buffer
	rep, err := Run(context.Background(), Options{Suites: []string{"one", "two"}, Reps: 3, MinTime: time.Millisecond, Peers: true, Interleave: true, Progress: &log},
		[]Suite{fakeSuite("one", &order, ""), fakeSuite("two", &order, "")})
	if err != nil {
		t.Fatal(err)
	}
	// Suite one has a peer: three rounds of (ours once, peer once); suite
	// two has none and runs rep-major as without Interleave.
	want := "one/a one/b peer(reps=1,ours=2) one/a one/b peer(reps=1,ours=2) one/a one/b peer(reps=1,ours=2) two/a two/b two/a two/b two/a two/b"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order %q,\nwant %q", got, want)
	}
	var keys []string
	for _, r := range rep.Rows {
		keys = append(keys, fmt.Sprintf("%s/%s/%s×%d", r.Suite, r.System, r.Config, len(r.Reps)))
	}
	if got, want := strings.Join(keys, " "), "one/rlsearch/a×3 one/rlsearch/b×3 one/fakepeer-2.0/a×3 two/rlsearch/a×3 two/rlsearch/b×3"; got != want {
		t.Errorf("rows %q, want %q (the peer's three calls joined into one row)", got, want)
	}
	if peer := rep.Peer(rep.Rows[0]); len(peer) != 1 || peer[0].Reps[0].Throughput != 3 || peer[0].Reps[2].Throughput != 9 {
		t.Errorf("peer row %+v, want its repetitions in call order", peer)
	}
	for _, w := range []string{"rep 3/3", "peer fakepeer-2.0 (round 2/3)"} {
		if !strings.Contains(log.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, log.String())
		}
	}
}

func TestRunCleanupBeforeLastPeerCall(t *testing.T) {
	var order []string
	RegisterPeer("fakepeer-3.0", []string{"one"}, func(ctx context.Context, suite string, o PeerOptions) ([]Row, error) {
		order = append(order, "peer")
		return nil, nil
	})
	t.Cleanup(func() { peersMu.Lock(); peers = peers[:len(peers)-1]; peersMu.Unlock() })
	for _, interleave := range []bool{false, true} {
		order = nil
		s := fakeSuite("one", &order, "")
		setup := s.Setup
		s.Setup = func(ctx context.Context, env *Env) ([]Case, func(), error) {
			cs, _, err := setup(ctx, env)
			return cs, func() { order = append(order, "cleanup") }, err
		}
		if _, err := Run(context.Background(), Options{Suites: []string{"one"}, Reps: 2, MinTime: time.Millisecond, Peers: true, Interleave: interleave}, []Suite{s}); err != nil {
			t.Fatal(err)
		}
		want := "one/a one/b one/a one/b cleanup peer"
		if interleave {
			want = "one/a one/b peer one/a one/b cleanup peer"
		}
		if got := strings.Join(order, " "); got != want {
			t.Errorf("interleave=%v: order %q, want %q (ours' index freed before the peer's last call)", interleave, got, want)
		}
	}
}

func TestMeasureCPU(t *testing.T) {
	rp, err := Measure(context.Background(), Budget{MinTime: 40 * time.Millisecond}, func(ctx context.Context, i int) (int, error) {
		for end := time.Now().Add(time.Millisecond); time.Now().Before(end); {
		}
		return 1, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (rp.CPU <= 0 || rp.CPU > 4*rp.Elapsed) {
		t.Errorf("CPU %v over %v of spinning on one goroutine: want > 0 and not far above the wall time", rp.CPU, rp.Elapsed)
	}
	r := Row{Reps: []Rep{rp, {Ops: 10, CPU: 50 * time.Microsecond}, {Ops: 10, CPU: 30 * time.Microsecond}}}
	r.Reps[0].CPU, r.Reps[0].Ops = 40*time.Microsecond, 10
	if v, ok := r.CPUPerOp(); !ok || v != 4 {
		t.Errorf("CPUPerOp = %v, %v; want the median 4 µs", v, ok)
	}
	if _, ok := (Row{Reps: []Rep{{Ops: 3}}}).CPUPerOp(); ok {
		t.Error("CPUPerOp of a row without CPU time: want false")
	}
}

func TestRunBadOptions(t *testing.T) {
	for _, o := range []Options{{Suites: []string{"nope"}}, {Suites: []string{"x"}, Reps: -1}, {Suites: []string{"x"}, Threads: []int{0}}} {
		if _, err := Run(context.Background(), o, []Suite{{Name: "x"}}); !errors.Is(err, ErrConfig) {
			t.Errorf("Run(%+v): err %v, want ErrConfig", o, err)
		}
	}
}

func TestKey(t *testing.T) {
	got := Key(map[string]any{"threads": 2, "batch": 64, "data": "bge-base"})
	if want := "batch=64 data=bge-base threads=2"; got != want {
		t.Errorf("Key = %q, want %q (sorted keys)", got, want)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	rep := &Report{Env: CaptureEnv(), Options: Options{Suites: []string{"flat"}, Reps: 2, MinTime: time.Second, Threads: []int{1, 2}, Seed: 1},
		Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), WallSeconds: 3.5,
		Rows: []Row{{Suite: "flat", System: Ours, Config: "batch=1", Params: map[string]any{"batch": 1.0}, Unit: "queries/s",
			Reps: []Rep{{Throughput: 10, P50ms: 1, P95ms: 2, P99ms: 3, Ops: 100, Elapsed: time.Second, Extra: map[string]float64{"recall@10": 0.9}, Latencies: []float64{1, 2}},
				{Throughput: 12, Ops: 120, Elapsed: time.Second}}}},
		Skipped: []Skip{{Suite: "gpu", Reason: "skipped: no GPU"}}}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(rep)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Errorf("round trip differs:\n%s\n%s", a, b)
	}
	if rep.Env.Cores < 1 || rep.Env.GoVersion == "" {
		t.Errorf("environment %+v lacks cores or go version", rep.Env)
	}
	// A peer runner's bare array reads as a report of rows.
	rows, _ := json.Marshal(rep.Rows)
	os.WriteFile(path, rows, 0o644)
	if got, err := ReadReport(path); err != nil || len(got.Rows) != 1 {
		t.Errorf("bare rows: %v, %d rows; want 1 row", err, len(got.Rows))
	}
}

func TestReadRowsRejectsBadRows(t *testing.T) {
	for _, tc := range []struct{ name, json string }{
		{"not an array", `{"suite": "x"}`},
		{"empty system", `[{"suite": "flat", "config": "c", "unit": "u", "reps": [{"throughput": 1}]}]`},
		{"no reps", `[{"suite": "flat", "system": "faiss", "config": "c", "unit": "u", "reps": []}]`},
		{"negative throughput", `[{"suite": "flat", "system": "faiss", "config": "c", "unit": "u", "reps": [{"throughput": -1}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadRows(strings.NewReader(tc.json)); !errors.Is(err, ErrBadRow) {
				t.Errorf("err %v, want ErrBadRow", err)
			}
		})
	}
}

func TestAdaptRunner(t *testing.T) {
	var got map[string]string
	fn := AdaptRunner(func(ctx context.Context, suite string, opts map[string]string, _ io.Writer) ([]Row, error) {
		got = opts
		return []Row{{Suite: suite, System: "p", Config: "c", Unit: "u", Reps: []Rep{{Throughput: 1}}}, {Suite: suite}}, nil
	})
	rows, err := fn(context.Background(), "flat", PeerOptions{Options: Options{Data: "/d", Reps: 3, MinTime: time.Second, Threads: []int{1, 2},
		Set: map[string]string{"flat.batch": "1,64", "hnsw.ef": "16"}}, Ours: []Row{{Config: "c"}}})
	if !errors.Is(err, ErrBadRow) || len(rows) != 1 {
		t.Errorf("rows %d, err %v: want the valid first row and ErrBadRow for the second", len(rows), err)
	}
	for k, want := range map[string]string{"data": "/d", "reps": "3", "min_time": "1s", "threads": "1,2", "batch": "1,64"} {
		if got[k] != want {
			t.Errorf("opts[%q] = %q, want %q", k, got[k], want)
		}
	}
	if _, ok := got["ef"]; ok || !strings.Contains(got["ours"], `"config":"c"`) {
		t.Errorf("opts %v: want no other suite's settings and ours as JSON", got)
	}
}
