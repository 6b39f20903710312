package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/router"
)

var quiet = slog.New(slog.DiscardHandler)

// node is one in-process server (a shard server, the unsharded server or
// the router) on a loopback port that survives stop and restart.
type node struct {
	t       testing.TB
	addr    string
	handler http.Handler
	stalled atomic.Bool   // requests (health checks included) hang, as under SIGSTOP
	unstall chan struct{} // closed by resume

	mu  sync.Mutex
	srv *http.Server

	// Handlers still running: stop, like a kill, does not wait for them,
	// but the test's cleanup does before the service under them is closed.
	// A counter under a mutex, not a sync.WaitGroup: a connection that
	// read its request just before stop may enter serveHTTP while the
	// cleanup waits, and a WaitGroup's Add from zero must not race Wait.
	gate    sync.Mutex
	idle    *sync.Cond // signalled when active drops to 0
	active  int
	retired bool // set by the cleanup: later requests get 503, not the handler
}

// serve starts h on addr ("" = a free loopback port).
func serve(t testing.TB, addr string, h http.Handler) *node {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	n := &node{t: t, handler: h, addr: addr, unstall: make(chan struct{})}
	n.idle = sync.NewCond(&n.gate)
	n.start()
	t.Cleanup(func() {
		n.stop()
		n.gate.Lock()
		n.retired = true
		for n.active > 0 {
			n.idle.Wait()
		}
		n.gate.Unlock()
	})
	return n
}

func (n *node) start() {
	n.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the port of a stopped node can take a moment to free
		if ln, err = net.Listen("tcp", n.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		n.t.Fatal(err)
	}
	n.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(n.serveHTTP)}
	n.mu.Lock()
	n.srv = srv
	n.mu.Unlock()
	go srv.Serve(ln)
}

func (n *node) serveHTTP(w http.ResponseWriter, r *http.Request) {
	n.gate.Lock()
	if n.retired {
		n.gate.Unlock()
		http.Error(w, "node retired", http.StatusServiceUnavailable)
		return
	}
	n.active++
	n.gate.Unlock()
	defer func() {
		n.gate.Lock()
		if n.active--; n.active == 0 {
			n.idle.Broadcast()
		}
		n.gate.Unlock()
	}()
	if n.stalled.Load() {
		n.mu.Lock()
		c := n.unstall
		n.mu.Unlock()
		select {
		case <-c:
		case <-r.Context().Done():
			return
		}
	}
	n.handler.ServeHTTP(w, r)
}

// url is the node's base URL.
func (n *node) url() string { return "http://" + n.addr }

// stop closes the listener and every connection at once, as a killed
// process does (in-flight requests see a reset connection).
func (n *node) stop() {
	n.mu.Lock()
	srv := n.srv
	n.srv = nil
	n.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// restart serves again on the same address.
func (n *node) restart() { n.start() }

// stall makes the node hang every request until resume.
func (n *node) stall() {
	n.mu.Lock()
	n.unstall = make(chan struct{})
	n.mu.Unlock()
	n.stalled.Store(true)
}

func (n *node) resume() {
	n.stalled.Store(false)
	n.mu.Lock()
	close(n.unstall)
	n.mu.Unlock()
}

// writeCorpus writes n seeded passages of words drawn from a small
// vocabulary (so that BM25 ties are common) and returns its path.
func writeCorpus(t testing.TB, dir string, n int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 24))
	vocab := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega river mountain city film album band novel king queen war battle")
	var b bytes.Buffer
	for i := range n {
		words := make([]string, 3+r.IntN(25))
		for j := range words {
			words[j] = vocab[min(r.IntN(len(vocab)), r.IntN(len(vocab)))]
		}
		fmt.Fprintf(&b, `{"id": "doc-%05d", "contents": "\"Title %d\"\n%s"}`+"\n", i, i%97, strings.Join(words, " "))
	}
	p := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// randomQueries draws n seeded queries of 1 to 8 words from vocab, with
// words absent from the corpus and stop words among them.
func randomQueries(r *rand.Rand, vocab []string, n int) []string {
	extra := []string{"the", "of", "and", "zzqx", "absentword"}
	out := make([]string, n)
	for i := range out {
		words := make([]string, 1+r.IntN(8))
		for j := range words {
			if r.IntN(6) == 0 {
				words[j] = extra[r.IntN(len(extra))]
			} else {
				words[j] = vocab[r.IntN(len(vocab))]
			}
		}
		out[i] = strings.Join(words, " ")
	}
	return out
}

// shardSet is a sharded build and its shard servers.
type shardSet struct {
	dir      string
	manifest *index.Manifest
	nodes    [][]*node // per shard, its replicas
}

// buildShards builds corpus as n shards under dir.
func buildShards(t testing.TB, corpusPath, dir string, n int, cfg index.BuildConfig) *index.Manifest {
	t.Helper()
	cfg.Corpus, cfg.Dir, cfg.Shards = corpusPath, dir, n
	m, err := index.BuildShards(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// startIndex serves the index (or shard) in dir with cfg's other fields.
func startIndex(t testing.TB, dir string, cfg app.Config) *node {
	t.Helper()
	cfg.Index.Dir = dir
	cfg.Logger = quiet
	svc, err := app.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return serve(t, "", svc.Handler())
}

// startShards serves every shard of m with replicas[i] servers (1 when
// replicas is shorter).
func startShards(t testing.TB, dir string, m *index.Manifest, replicas []int, cfg app.Config) *shardSet {
	t.Helper()
	s := &shardSet{dir: dir, manifest: m, nodes: make([][]*node, len(m.Shards))}
	for i, sh := range m.Shards {
		k := 1
		if i < len(replicas) {
			k = replicas[i]
		}
		for range k {
			s.nodes[i] = append(s.nodes[i], startIndex(t, filepath.Join(dir, sh.Dir), cfg))
		}
	}
	return s
}

func (s *shardSet) urls() []string {
	var out []string
	for _, reps := range s.nodes {
		for _, n := range reps {
			out = append(out, n.url())
		}
	}
	return out
}

// fastRouter is a router configuration for tests: quick health checks.
func fastRouter(urls []string) router.Config {
	return router.Config{Endpoints: urls, HealthInterval: 50 * time.Millisecond, HealthTimeout: 250 * time.Millisecond, StartTimeout: 10 * time.Second}
}

// startRouter serves a router over urls.
func startRouter(t testing.TB, rc router.Config, cfg app.RouterConfig) (*node, *app.Service) {
	t.Helper()
	cfg.Router, cfg.Logger = rc, quiet
	svc, err := app.NewRouter(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return serve(t, "", svc.Handler()), svc
}

// post sends body to url+path and returns the status, the partial header
// and the body.
func post(t testing.TB, c *http.Client, url, path, body string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := c.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s%s: %v", url, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// retrieveBody is a /retrieve body.
func retrieveBody(queries []string, k int, retriever string) string {
	b, _ := json.Marshal(map[string]any{"queries": queries, "topk": k, "return_scores": true, "retriever": retriever})
	return string(b)
}

// waitFor polls cond every 20 ms for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// live is the number of live replicas of shard i in the router's health.
func live(svc *app.Service, shard int) int {
	h := svc.Router.Health()["router"].(map[string]any)["shards"].([]map[string]any)
	return h[shard]["live"].(int)
}

var errStatus = errors.New("unexpected status")
