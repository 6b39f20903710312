package router_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/bench/loadgen"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/internal/testutil"
)

// The fault tests run real processes of the rlsearch binary on loopback:
// shard servers with two replicas per shard and a router, and kill -9,
// SIGSTOP and restart them. The binary is $RLSEARCH_BIN (make test sets it
// to bin/rlsearch) or built once per test run.

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func rlsearchBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("RLSEARCH_BIN"); b != "" {
		return b
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rlsearch-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "rlsearch")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/rlsearch")
		cmd.Dir = testutil.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is one rlsearch serve process.
type proc struct {
	t    *testing.T
	args []string
	addr string // 127.0.0.1:PORT once listening
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has exited
}

// startProc runs `rlsearch serve args... --addr addr` ("" = a free port)
// and waits until it listens (or exits: the error names its log).
func startProc(t *testing.T, addr string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, args: args, addr: addr}
	p.start()
	t.Cleanup(p.kill)
	return p
}

func (p *proc) start() {
	t := p.t
	t.Helper()
	addr := p.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	log, err := os.CreateTemp(t.TempDir(), "serve-*.log")
	if err != nil {
		t.Fatal(err)
	}
	p.log = log
	cmd := exec.Command(rlsearchBin(t), append(append([]string{"serve"}, p.args...), "--addr", addr)...)
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	go func() { cmd.Wait(); close(p.done) }()
	select {
	case l := <-lines:
		p.addr = strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(l, "listening on ")), "http://")
	case <-p.done:
		b, _ := os.ReadFile(log.Name())
		t.Fatalf("rlsearch serve %v exited before listening: %v\n%s", p.args, cmd.ProcessState, b)
	case <-time.After(2 * time.Minute):
		t.Fatalf("rlsearch serve %v: not listening after 2 minutes", p.args)
	}
}

func (p *proc) url() string { return "http://" + p.addr }

// kill sends SIGKILL (kill -9) and waits for the exit.
func (p *proc) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		p.cmd.Process.Signal(syscall.SIGCONT) // a stopped process must be able to die
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *proc) signal(s syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		p.t.Fatal(err)
	}
	if s == syscall.SIGSTOP {
		// kill(2) returns before the process has stopped: a request sent
		// at once may still be answered (seen: one 0.3 ms after). Wait
		// until every thread is in the stopped state in /proc (Linux;
		// elsewhere, go on).
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", p.cmd.Process.Pid))
			if err != nil || len(tasks) == 0 {
				return
			}
			stopped := true
			for _, task := range tasks {
				b, _ := os.ReadFile(task)
				// The state is the field after the ")" ending the command name.
				i := strings.LastIndexByte(string(b), ')')
				stopped = stopped && i > 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't')
			}
			if stopped {
				return
			}
		}
		p.t.Fatalf("process %d not stopped 5 s after SIGSTOP", p.cmd.Process.Pid)
	}
}

// restart starts the process again on the same address.
func (p *proc) restart() {
	p.t.Helper()
	p.start()
}

// faultCluster is 2 shards × 2 replicas as processes, over a generated
// corpus.
type faultCluster struct {
	replicas [][]*proc
	dir      string
	manifest *index.Manifest
	vocab    []string
}

func newFaultCluster(t *testing.T) *faultCluster {
	t.Helper()
	dir := t.TempDir()
	corpus := writeCorpus(t, dir, 4000, 11)
	c := &faultCluster{dir: filepath.Join(dir, "shards")}
	c.manifest = buildShards(t, corpus, c.dir, 2, index.BuildConfig{})
	c.vocab = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa river mountain city film album band novel king queen war battle")
	for _, s := range c.manifest.Shards {
		var reps []*proc
		for range 2 {
			reps = append(reps, startProc(t, "", "--index", filepath.Join(c.dir, s.Dir)))
		}
		c.replicas = append(c.replicas, reps)
	}
	return c
}

func (c *faultCluster) urls() string {
	var u []string
	for _, reps := range c.replicas {
		for _, p := range reps {
			u = append(u, p.url())
		}
	}
	return strings.Join(u, ",")
}

// router starts a router process over the cluster with extra flags.
func (c *faultCluster) router(t *testing.T, flags ...string) *proc {
	t.Helper()
	return startProc(t, "", append([]string{"--shards", c.urls(), "--shard-health-interval", "100ms", "--shard-health-timeout", "300ms"}, flags...)...)
}

// routerHealth reads the router's /healthz: live replicas per shard.
func routerHealth(t *testing.T, url string) []int {
	t.Helper()
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var h struct {
		Router struct {
			Shards []struct {
				Live int `json:"live"`
			} `json:"shards"`
		} `json:"router"`
	}
	json.NewDecoder(resp.Body).Decode(&h)
	out := make([]int, len(h.Router.Shards))
	for i, s := range h.Router.Shards {
		out[i] = s.Live
	}
	return out
}

func faultSeconds() time.Duration {
	if s, err := strconv.Atoi(os.Getenv("RLSEARCH_FAULT_SECONDS")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return 6 * time.Second
}

// TestFaultKillReplicaUnderLoad: 32 closed-loop clients on the router for
// RLSEARCH_FAULT_SECONDS (6 s here, 60 s in make test-router-full); a
// third of the way in one replica is killed with SIGKILL, two thirds in it
// is started again. No request may fail, and the replica must rejoin.
func TestFaultKillReplicaUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c := newFaultCluster(t)
	rt := c.router(t)
	d := faultSeconds()
	victim := c.replicas[0][1]
	r := rand.New(rand.NewPCG(32, 60))
	var mu sync.Mutex
	var fails []string
	type outcome struct {
		res loadgen.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := loadgen.RunClosed(context.Background(), loadgen.ClosedConfig{
			URL: rt.url() + "/retrieve", Concurrency: 32, Duration: d, Timeout: 30 * time.Second,
			Body: func(int) []byte {
				mu.Lock()
				defer mu.Unlock()
				return []byte(retrieveBody(randomQueries(r, c.vocab, 1), 10, "bm25"))
			},
			OnError: func(status int, err error) {
				mu.Lock()
				fails = append(fails, fmt.Sprintf("%d %v", status, err))
				mu.Unlock()
			},
		})
		done <- outcome{res, err}
	}()
	time.Sleep(d / 3)
	victim.kill()
	time.Sleep(d / 3)
	victim.restart()
	o := <-done
	res, err := o.res, o.err
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("c=32 for %v, one of 2 replicas of shard 0 killed at %v and restarted at %v: %d requests, %d failed, %.0f requests/s, p50 %v, p99 %v, max %v",
		d, d/3, 2*d/3, res.Sent, res.Errors, res.Throughput, res.P50, res.P99, res.Max)
	if res.Errors > 0 || res.OK < 100 {
		t.Errorf("%d of %d requests failed (want 0): %v", res.Errors, res.Sent, fails[:min(len(fails), 5)])
	}
	waitFor(t, "the restarted replica to rejoin", func() bool { h := routerHealth(t, rt.url()); return len(h) == 2 && h[0] == 2 })
}

// TestFaultAllReplicasKilled: both replicas of shard 1 killed. A router
// with --on-missing-shard=fail answers 503 with Retry-After naming the
// shard, within the deadline; one with partial answers 200 flagged
// partial. Restarted, the shard rejoins both routers.
func TestFaultAllReplicasKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c := newFaultCluster(t)
	failR := c.router(t, "--shard-timeout", "2s")
	partR := c.router(t, "--shard-timeout", "2s", "--on-missing-shard", "partial")
	body := retrieveBody([]string{"alpha beta river"}, 10, "bm25")
	hc := &http.Client{}
	for _, p := range c.replicas[1] {
		p.kill()
	}
	start := time.Now()
	code, hdr, b := post(t, hc, failR.url(), "/retrieve", body)
	if d := time.Since(start); code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(string(b), "shard 1 of 2") || d > 2500*time.Millisecond {
		t.Errorf("fail: %d in %v, Retry-After %q, %s; want 503 naming shard 1 of 2 within the 2s deadline", code, d, hdr.Get("Retry-After"), b)
	}
	code, hdr, b = post(t, hc, partR.url(), "/retrieve", body)
	if code != 200 || hdr.Get("X-Rlsearch-Partial") != "shard 1 of 2" || !strings.Contains(string(b), `"partial":["shard 1 of 2"]`) {
		t.Errorf("partial: %d %q %.200s; want 200 flagged partial", code, hdr.Get("X-Rlsearch-Partial"), b)
	}
	resp, err := http.Get(partR.url() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	m := new(strings.Builder)
	bufio.NewReader(resp.Body).WriteTo(m)
	resp.Body.Close()
	if !strings.Contains(m.String(), `rlsearch_router_missing_shard_total{policy="partial",shard="1"} 1`) {
		t.Errorf("partial router's /metrics lacks the partial count of shard 1")
	}
	for _, p := range c.replicas[1] {
		p.restart()
	}
	for _, r := range []*proc{failR, partR} {
		waitFor(t, "shard 1 to rejoin", func() bool { h := routerHealth(t, r.url()); return len(h) == 2 && h[1] == 2 })
		if code, hdr, b := post(t, hc, r.url(), "/retrieve", body); code != 200 || hdr.Get("X-Rlsearch-Partial") != "" {
			t.Errorf("after the restart: %d %q %s", code, hdr.Get("X-Rlsearch-Partial"), b)
		}
	}
}

// TestFaultStoppedShard: SIGSTOP one replica of shard 0: requests keep
// being answered well within the deadline (hedged to the other replica);
// SIGSTOP the other too: requests end at the deadline with 503 naming the
// shard; SIGCONT both: the shard is live again.
func TestFaultStoppedShard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c := newFaultCluster(t)
	rt := c.router(t, "--shard-timeout", "1s", "--shard-timeout-per-query", "1ms", "--hedge-after", "50ms")
	hc := &http.Client{}
	body := retrieveBody([]string{"gamma delta"}, 3, "bm25")
	a, b := c.replicas[0][0], c.replicas[0][1]
	a.signal(syscall.SIGSTOP)
	var slowest time.Duration
	for range 20 {
		start := time.Now()
		code, _, out := post(t, hc, rt.url(), "/retrieve", body)
		slowest = max(slowest, time.Since(start))
		if code != 200 {
			t.Fatalf("one replica stopped: %d %s", code, out)
		}
	}
	if slowest > 900*time.Millisecond {
		t.Errorf("one replica stopped: slowest request %v, want well within the 1s deadline", slowest)
	}
	b.signal(syscall.SIGSTOP)
	start := time.Now()
	code, hdr, out := post(t, hc, rt.url(), "/retrieve", body)
	if d := time.Since(start); code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(string(out), "shard 0 of 2") || d > 1500*time.Millisecond {
		t.Errorf("both replicas stopped: %d in %v %s; want 503 naming shard 0 at the 1s deadline", code, d, out)
	}
	a.signal(syscall.SIGCONT)
	b.signal(syscall.SIGCONT)
	waitFor(t, "the resumed replicas to be live", func() bool { h := routerHealth(t, rt.url()); return len(h) == 2 && h[0] == 2 })
	if code, _, out := post(t, hc, rt.url(), "/retrieve", body); code != 200 {
		t.Errorf("after SIGCONT: %d %s", code, out)
	}
}

// TestFaultOtherBuildRefusedAtStart: a router over shards of two builds
// exits at start with an error naming the endpoints and both builds.
func TestFaultOtherBuildRefusedAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c := newFaultCluster(t)
	dir := t.TempDir()
	other := buildShards(t, writeCorpus(t, dir, 4000, 12), filepath.Join(dir, "other"), 2, index.BuildConfig{})
	stranger := startProc(t, "", "--index", filepath.Join(dir, "other", other.Shards[1].Dir))
	cmd := exec.Command(rlsearchBin(t), "serve", "--shards", c.replicas[0][0].url()+","+c.replicas[1][0].url()+","+stranger.url(), "--addr", "127.0.0.1:0")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("router over two builds: %v, want a failed start\n%s", err, out)
	}
	for _, w := range []string{"different builds", stranger.url(), c.manifest.BuildID[:12], other.BuildID[:12]} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the error does not name %q:\n%s", w, out)
		}
	}
	if strings.Contains(string(out), "listening on") {
		t.Errorf("the router listened:\n%s", out)
	}
}
