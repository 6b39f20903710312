package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
	"github.com/rlsearch/rlsearch/index"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/router"
)

// synth is a generated corpus built as one index and as shards.
type synth struct {
	corpus, one, shards string
	manifest            *index.Manifest
	vocab               []string
}

func newSynth(t *testing.T, n, shards int) *synth {
	t.Helper()
	dir := t.TempDir()
	s := &synth{corpus: writeCorpus(t, dir, n, 7), one: filepath.Join(dir, "one"), shards: filepath.Join(dir, "shards")}
	if _, err := index.Build(context.Background(), index.BuildConfig{Corpus: s.corpus, Dir: s.one}); err != nil {
		t.Fatal(err)
	}
	s.manifest = buildShards(t, s.corpus, s.shards, shards, index.BuildConfig{})
	s.vocab = strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega river mountain city film album band novel king queen war battle title")
	return s
}

// TestRouterEqualsOneServer: 3 shards (shard 0 with 2 replicas) behind a
// router answer /retrieve byte for byte as one server over the unsharded
// index (ids, order, scores; many ties in the generated corpus), for 400
// random queries at k 1, 3, 10, 100, in batches and alone; programs give
// the same results.
func TestRouterEqualsOneServer(t *testing.T) {
	s := newSynth(t, 1500, 3)
	one := startIndex(t, s.one, app.Config{})
	set := startShards(t, s.shards, s.manifest, []int{2}, app.Config{})
	rt, svc := startRouter(t, fastRouter(set.urls()), app.RouterConfig{})
	if svc.Router.Shards() != 3 || svc.Router.BuildID() != s.manifest.BuildID {
		t.Fatalf("router over %d shards of build %s, want 3 of %s", svc.Router.Shards(), svc.Router.BuildID(), s.manifest.BuildID)
	}
	c := &http.Client{}
	qs := randomQueries(rand.New(rand.NewPCG(1, 2)), s.vocab, 400)
	for _, k := range []int{1, 3, 10, 100} {
		for lo := 0; lo < len(qs); lo += 100 {
			body := retrieveBody(qs[lo:lo+100], k, "bm25")
			_, _, want := post(t, c, one.url(), "/retrieve", body)
			code, hdr, got := post(t, c, rt.url(), "/retrieve", body)
			if code != 200 || hdr.Get(server.PartialHeader) != "" || !bytes.Equal(got, want) {
				t.Fatalf("k=%d queries %d..: router %d %q\n%.600s\nwant\n%.600s", k, lo, code, hdr.Get(server.PartialHeader), got, want)
			}
		}
		// One query per request, scores off (bare documents).
		for _, q := range qs[:20] {
			body := fmt.Sprintf(`{"queries": [%q], "topk": %d}`, q, k)
			_, _, want := post(t, c, one.url(), "/retrieve", body)
			if _, _, got := post(t, c, rt.url(), "/retrieve", body); !bytes.Equal(got, want) {
				t.Fatalf("k=%d %q: router %s\nwant %s", k, q, got, want)
			}
		}
	}
	var progs []map[string]string
	for i, q := range qs[:50] {
		code := []string{"print(sparse(question, k=5))", "print(fuse(sparse(question, k=10), sparse(\"alpha beta\", k=10))[:4])", "print(dedup(sparse(question, k=20))[:3])"}[i%3]
		progs = append(progs, map[string]string{"id": fmt.Sprint(i), "question": q, "code": code})
	}
	body, _ := json.Marshal(map[string]any{"programs": progs})
	_, _, want := post(t, c, one.url(), "/v1/programs/execute", string(body))
	if _, _, got := post(t, c, rt.url(), "/v1/programs/execute", string(body)); !bytes.Equal(got, want) {
		t.Fatalf("programs through the router differ:\n%.800s\nwant\n%.800s", got, want)
	}
	// Bad input is the router's 400, as the server's.
	for _, b := range []string{`{"queries": ["a"], "topk": 5000}`, `{"queries": ["a"], "top_k": 3}`, `{"queries": "a"}`, `{"queries": ["a"], "retriever": "e5"}`} {
		_, _, want := post(t, c, one.url(), "/retrieve", b)
		if code, _, got := post(t, c, rt.url(), "/retrieve", b); code != 400 || !bytes.Equal(got, want) {
			t.Errorf("%s: router %d %s, server %s", b, code, got, want)
		}
	}
}

// TestRouterRefusesOtherBuild: a shard of another build (another corpus)
// among the endpoints, or a pinned build no shard serves, stops the router
// at start with an error naming the endpoint; an unsharded server is no
// shard server.
func TestRouterRefusesOtherBuild(t *testing.T) {
	a := newSynth(t, 300, 2)
	dir := t.TempDir()
	otherCorpus := writeCorpus(t, dir, 300, 99)
	bm := buildShards(t, otherCorpus, filepath.Join(dir, "b"), 2, index.BuildConfig{})
	setA := startShards(t, a.shards, a.manifest, nil, app.Config{})
	setB := startShards(t, filepath.Join(dir, "b"), bm, nil, app.Config{})
	one := startIndex(t, a.one, app.Config{})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		cfg  router.Config
		want []string
	}{
		{"mixed builds", fastRouter([]string{setA.nodes[0][0].url(), setA.nodes[1][0].url(), setB.nodes[1][0].url()}),
			[]string{"2 different builds", setB.nodes[1][0].url(), a.manifest.BuildID[:12], bm.BuildID[:12]}},
		{"pinned build", func() router.Config { c := fastRouter(setA.urls()); c.BuildID = bm.BuildID; return c }(),
			[]string{"--shard-build", setA.nodes[0][0].url()}},
		{"not a shard", fastRouter([]string{setA.nodes[0][0].url(), one.url()}), []string{one.url(), "not a shard server"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := app.NewRouter(ctx, app.RouterConfig{Router: c.cfg, Logger: quiet})
			if !errors.Is(err, router.ErrBuild) {
				t.Fatalf("err %v, want router.ErrBuild", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
	// A missing shard at start: the wait ends with an error naming it.
	rc := fastRouter([]string{setA.nodes[0][0].url()})
	rc.StartTimeout = 300 * time.Millisecond
	if _, err := app.NewRouter(ctx, app.RouterConfig{Router: rc, Logger: quiet}); err == nil || !strings.Contains(err.Error(), "shards [1]") {
		t.Errorf("one of two shards: err %v, want the missing shard named", err)
	}
	// Once started, a replica of another build that appears at an
	// endpoint is refused (never routed to), counted, and does not stop
	// the router.
	late := setB.nodes[0][0]
	late.stop()
	reg := prometheus.NewRegistry()
	rt, svc := startRouter(t, fastRouter(append(setA.urls(), late.url())), app.RouterConfig{Server: server.Config{Registry: reg}})
	late.restart()
	waitFor(t, "the other build's replica to be refused", func() bool {
		ref, _ := svc.Router.Health()["router"].(map[string]any)["refused"].([]map[string]any)
		return len(ref) == 1 && ref[0]["url"] == late.url() && strings.Contains(ref[0]["reason"].(string), "another corpus or another build")
	})
	c := &http.Client{}
	for range 20 {
		if code, _, body := post(t, c, rt.url(), "/retrieve", retrieveBody([]string{"alpha"}, 3, "bm25")); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	if n := metric(t, reg, "rlsearch_router_shard_requests_total", map[string]string{"replica": late.url()}); n != 0 {
		t.Errorf("%v requests routed to the refused replica", n)
	}
	if n := metric(t, reg, "rlsearch_router_replica_refused", map[string]string{"replica": late.url()}); n != 1 {
		t.Errorf("refused gauge %v, want 1", n)
	}
}

// TestRouterMissingShard: every replica of a shard gone. Fail: 503 with
// Retry-After naming the shard, on /retrieve and on programs (which would
// otherwise answer 200 with an error observation). Partial: 200 from the
// other shards, flagged, and counted. A restarted replica rejoins.
func TestRouterMissingShard(t *testing.T) {
	s := newSynth(t, 900, 3)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	c := &http.Client{}
	q := retrieveBody([]string{"alpha beta", "river city"}, 10, "bm25")
	prog := `{"programs": [{"question": "alpha beta", "code": "print(sparse(question, k=3))"}]}`
	for _, policy := range []string{router.Fail, router.Partial} {
		t.Run(policy, func(t *testing.T) {
			rc := fastRouter(set.urls())
			rc.OnMissingShard = policy
			reg := prometheus.NewRegistry()
			rt, svc := startRouter(t, rc, app.RouterConfig{Server: server.Config{Registry: reg}})
			if code, _, _ := post(t, c, rt.url(), "/retrieve", q); code != 200 {
				t.Fatalf("all shards up: %d", code)
			}
			set.nodes[1][0].stop()
			defer func() {
				set.nodes[1][0].restart()
				waitFor(t, "shard 1 to rejoin", func() bool { return live(svc, 1) == 1 })
				if code, hdr, _ := post(t, c, rt.url(), "/retrieve", q); code != 200 || hdr.Get(server.PartialHeader) != "" {
					t.Errorf("after the restart: %d %q, want a full 200", code, hdr.Get(server.PartialHeader))
				}
			}()
			code, hdr, body := post(t, c, rt.url(), "/retrieve", q)
			pcode, phdr, pbody := post(t, c, rt.url(), "/v1/programs/execute", prog)
			switch policy {
			case router.Fail:
				if code != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(string(body), "shard 1 of 3") {
					t.Errorf("/retrieve: %d Retry-After %q %s; want 503 naming shard 1 of 3", code, hdr.Get("Retry-After"), body)
				}
				if pcode != 503 || phdr.Get("Retry-After") == "" || !strings.Contains(string(pbody), "shard 1 of 3") {
					t.Errorf("programs: %d %s; want 503 naming shard 1 of 3", pcode, pbody)
				}
				if n := metric(t, reg, "rlsearch_router_missing_shard_total", map[string]string{"shard": "1", "policy": "fail"}); n < 2 {
					t.Errorf("missing-shard counter %v, want >= 2", n)
				}
			case router.Partial:
				if code != 200 || hdr.Get(server.PartialHeader) != "shard 1 of 3" || !strings.Contains(string(body), `"partial":["shard 1 of 3"]`) {
					t.Errorf("/retrieve: %d %q %.300s; want 200 flagged partial", code, hdr.Get(server.PartialHeader), body)
				}
				var res struct {
					Result [][]struct {
						Document rlsearch.Document `json:"document"`
					} `json:"result"`
				}
				json.Unmarshal(body, &res)
				for _, l := range res.Result {
					for _, h := range l {
						var row int
						fmt.Sscanf(h.Document.ID, "doc-%d", &row)
						if row >= 300 && row < 600 {
							t.Errorf("partial answer holds %s of the missing shard", h.Document.ID)
						}
					}
				}
				if pcode != 200 || phdr.Get(server.PartialHeader) != "shard 1 of 3" {
					t.Errorf("programs: %d %q; want 200 flagged partial", pcode, phdr.Get(server.PartialHeader))
				}
				if n := metric(t, reg, "rlsearch_router_missing_shard_total", map[string]string{"shard": "1", "policy": "partial"}); n < 2 {
					t.Errorf("partial counter %v, want >= 2", n)
				}
			}
		})
	}
}

// metric is the value of the counter or gauge name with labels in reg
// (0 when absent).
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// TestRouterStalledShard: a stalled replica (requests hang, as under
// SIGSTOP). With a second replica the hedge answers quickly; with none,
// the request ends at the shard deadline (503 under fail); the shard
// rejoins when it resumes.
func TestRouterStalledShard(t *testing.T) {
	s := newSynth(t, 600, 2)
	set := startShards(t, s.shards, s.manifest, []int{2, 1}, app.Config{})
	c := &http.Client{}
	q := retrieveBody([]string{"alpha"}, 3, "bm25")
	rc := fastRouter(set.urls())
	rc.ShardTimeout, rc.PerQueryTimeout, rc.HedgeAfter = 500*time.Millisecond, time.Millisecond, 20*time.Millisecond
	rt, svc := startRouter(t, rc, app.RouterConfig{})

	set.nodes[0][0].stall()
	for i := range 5 {
		start := time.Now()
		code, _, body := post(t, c, rt.url(), "/retrieve", q)
		if d := time.Since(start); code != 200 || d > 400*time.Millisecond {
			t.Errorf("request %d with one of two replicas stalled: %d in %v %s; want 200 well within the deadline", i, code, d, body)
		}
	}
	waitFor(t, "the stalled replica to be marked down", func() bool { return live(svc, 0) == 1 })
	set.nodes[0][0].resume()
	waitFor(t, "the resumed replica to rejoin", func() bool { return live(svc, 0) == 2 })

	set.nodes[1][0].stall()
	start := time.Now()
	code, hdr, body := post(t, c, rt.url(), "/retrieve", q)
	if d := time.Since(start); code != 503 || d > rc.ShardTimeout+300*time.Millisecond || hdr.Get("Retry-After") == "" || !strings.Contains(string(body), "shard 1 of 2") {
		t.Errorf("only replica stalled: %d in %v %s; want 503 naming shard 1 after about %v", code, d, body, rc.ShardTimeout)
	}
	set.nodes[1][0].resume()
	waitFor(t, "shard 1 to answer again", func() bool {
		code, _, _ := post(t, c, rt.url(), "/retrieve", q)
		return code == 200
	})
}

// TestRouterRetriesKilledReplica: under concurrent load, a replica
// stopped (connections reset) and restarted loses no request: failed
// attempts go to the other replica.
func TestRouterRetriesKilledReplica(t *testing.T) {
	s := newSynth(t, 600, 2)
	set := startShards(t, s.shards, s.manifest, []int{2, 2}, app.Config{})
	rt, _ := startRouter(t, fastRouter(set.urls()), app.RouterConfig{})
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	qs := randomQueries(rand.New(rand.NewPCG(5, 5)), s.vocab, 64)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	total := 0
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				code, _, body := post(t, c, rt.url(), "/retrieve", retrieveBody(qs[(w*7+i)%len(qs):(w*7+i)%len(qs)+1], 10, "bm25"))
				mu.Lock()
				total++
				if code != 200 {
					failures = append(failures, fmt.Sprintf("%d %s", code, body))
				}
				mu.Unlock()
			}
		}()
	}
	for range 3 {
		time.Sleep(150 * time.Millisecond)
		set.nodes[0][1].stop()
		time.Sleep(150 * time.Millisecond)
		set.nodes[0][1].restart()
	}
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(failures) > 0 || total < 50 {
		t.Errorf("%d of %d requests failed while a replica was killed and restarted: %v", len(failures), total, failures[:min(3, len(failures))])
	}
}

// TestRouterDocs: the router's documents by row, from the cache after a
// retrieval and from the shard otherwise, equal the index's.
func TestRouterDocs(t *testing.T) {
	s := newSynth(t, 500, 3)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	rc := fastRouter(set.urls())
	rc.DocCache = 1
	_, svc := startRouter(t, rc, app.RouterConfig{})
	one, err := index.Open(context.Background(), s.one, index.OpenConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	docs := svc.Router.Docs()
	if docs.Len() != 500 {
		t.Fatalf("Len %d, want 500", docs.Len())
	}
	for _, row := range []int32{0, 166, 167, 333, 334, 499} {
		got, err := docs.Doc(row)
		want, _ := one.Doc(row)
		if err != nil || got != want {
			t.Errorf("row %d: %v %v, want %v", row, got, err, want)
		}
	}
	if _, err := docs.Doc(500); err == nil {
		t.Error("row 500 of 500: no error")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  router.Config
		want string
	}{
		{router.Config{}, "no shard endpoints"},
		{router.Config{Endpoints: []string{"127.0.0.1:8000"}}, "want http://host:port"},
		{router.Config{Endpoints: []string{"http://h:1/retrieve"}}, "no path"},
		{router.Config{Endpoints: []string{"http://h:1"}, OnMissingShard: "ignore"}, "--on-missing-shard"},
		{router.Config{Endpoints: []string{"http://h:1"}, ShardTimeout: -1}, "--shard-timeout"},
		{router.Config{Endpoints: []string{"http://h:1"}, MaxInFlight: -1}, "--router-max-inflight"},
	} {
		if err := c.cfg.Validate(); !errors.Is(err, router.ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want ErrConfig saying %q", c.cfg, err, c.want)
		}
	}
}

// TestRouterHeadlessServiceDNS: one host name that resolves to every
// shard pod's address (a Kubernetes headless Service; the same port on
// each address): the router groups the addresses by the shard each
// reports, follows the name as addresses come and go, and drops a gone
// address once it is down.
func TestRouterHeadlessServiceDNS(t *testing.T) {
	s := newSynth(t, 600, 2)
	// Four loopback addresses on one port: shard 0 on .1 and .2, shard 1
	// on .3; .4 (a second replica of shard 1) appears later.
	var port string
	var nodes []*node
	for try := 0; ; try++ {
		nodes = nil
		first := startIndex(t, filepath.Join(s.shards, s.manifest.Shards[0].Dir), app.Config{})
		_, port, _ = strings.Cut(first.addr, ":")
		nodes = append(nodes, first)
		ok := true
		for i, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
			dir := s.manifest.Shards[min(i, 1)].Dir // shards 0, 1, 1
			n, err := tryServe(t, ip+":"+port, filepath.Join(s.shards, dir))
			if err != nil {
				ok = false
				break
			}
			nodes = append(nodes, n)
		}
		if ok {
			break
		}
		if try == 5 {
			t.Skip("no free port on 127.0.0.1-4")
		}
	}
	var mu sync.Mutex
	addrs := []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}
	rc := fastRouter([]string{"http://shards.ml.svc.cluster.local:" + port})
	rc.ResolveInterval = 50 * time.Millisecond
	rc.LookupHost = func(ctx context.Context, host string) ([]string, error) {
		if host != "shards.ml.svc.cluster.local" {
			return nil, fmt.Errorf("no such host %q", host)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(addrs), nil
	}
	rt, svc := startRouter(t, rc, app.RouterConfig{})
	if live(svc, 0) != 2 || live(svc, 1) != 1 {
		t.Fatalf("live replicas %d, %d; want 2, 1 from the name's three addresses", live(svc, 0), live(svc, 1))
	}
	mu.Lock()
	addrs = append(addrs, "127.0.0.4") // a new pod of shard 1
	mu.Unlock()
	waitFor(t, "the new address to join shard 1", func() bool { return live(svc, 1) == 2 })
	mu.Lock()
	addrs = slices.DeleteFunc(addrs, func(a string) bool { return a == "127.0.0.2" }) // a pod of shard 0 deleted
	mu.Unlock()
	nodes[1].stop()
	waitFor(t, "the deleted pod to leave", func() bool {
		reps := svc.Router.Health()["router"].(map[string]any)["shards"].([]map[string]any)[0]["replicas"].([]map[string]any)
		return len(reps) == 1
	})
	c := &http.Client{}
	if code, _, body := post(t, c, rt.url(), "/retrieve", retrieveBody([]string{"alpha beta"}, 5, "bm25")); code != 200 {
		t.Errorf("%d %s", code, body)
	}
}

// tryServe serves the index in dir on addr, or returns the listen error.
func tryServe(t *testing.T, addr, dir string) (*node, error) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ln.Close()
	svc, err := app.New(context.Background(), app.Config{Index: app.IndexConfig{Dir: dir}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	return serve(t, addr, svc.Handler()), nil
}
