package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch/internal/recovered"
	"github.com/rlsearch/rlsearch/server"
	"github.com/rlsearch/rlsearch/server/app"
	"github.com/rlsearch/rlsearch/server/router"
)

// TestRouterRefusesLyingReplica: a replica whose /healthz carries the
// build's id but claims "shard 2 of 3" beside shards of 2, listed last,
// stops the router at start with ErrBuild naming it (it panicked with
// index out of range [2] with length 2). Which replica is taken as the
// reference depends on which answered first; either way the message
// names the liar and its claim.
func TestRouterRefusesLyingReplica(t *testing.T) {
	s := newSynth(t, 300, 2)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	real := set.nodes[1][0].url()
	liar := serve(t, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(real + "/healthz")
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		var h map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &h); err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		sh := h["shard"].(map[string]any)
		sh["index"], sh["count"] = 2, 3
		json.NewEncoder(w).Encode(h)
	}))
	_, err := app.NewRouter(context.Background(), app.RouterConfig{Router: fastRouter(append(set.urls(), liar.url())), Logger: quiet})
	if !errors.Is(err, router.ErrBuild) || !strings.Contains(err.Error(), liar.url()) || !(strings.Contains(err.Error(), "shard 2 of 3") || strings.Contains(err.Error(), "3 shards")) {
		t.Fatalf("err %v, want router.ErrBuild naming %s as shard 2 of 3", err, liar.url())
	}
}

// TestRouterDocFetchHonoursContext: with a shard's /v1/shard/docs
// delayed, a document fetch whose context ends returns at once, and no
// fetch reaches the shard after its client left.
func TestRouterDocFetchHonoursContext(t *testing.T) {
	s := newSynth(t, 300, 2)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	target, _ := url.Parse(set.nodes[1][0].url())
	proxy := httputil.NewSingleHostReverseProxy(target)
	var late, reached atomic.Int64
	slow := serve(t, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == router.PathShardDocs {
			// Read the body first: net/http notices a client that hung up
			// only once the request body is consumed.
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			select {
			case <-time.After(time.Second):
			case <-r.Context().Done():
			}
			reached.Add(1)
			if r.Context().Err() != nil {
				return // the router gave up: nothing goes on to the shard
			}
			late.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	urls := set.urls()
	urls[len(urls)-1] = slow.url()
	rc := fastRouter(urls)
	rc.DocCache = 1
	_, svc := startRouter(t, rc, app.RouterConfig{})
	cs, ok := svc.Router.Docs().(server.ContextDocSource)
	if !ok {
		t.Fatal("router docs do not take a context")
	}
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		_, err := cs.DocContext(ctx, 299)
		cancel()
		if err == nil || time.Since(start) > 500*time.Millisecond {
			t.Fatalf("fetch with a 50 ms context: err %v after %v, want an error at once", err, time.Since(start))
		}
	}
	time.Sleep(1200 * time.Millisecond)
	if n := late.Load(); n != 0 {
		t.Errorf("%d document fetches went on to the shard after their client left (of %d)", n, reached.Load())
	}
}

// TestRouterRecoversPanic: a panic in a fan-out goroutine or a shard
// attempt becomes the request's 5xx, counted; the router keeps serving.
func TestRouterRecoversPanic(t *testing.T) {
	s := newSynth(t, 300, 2)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	rt, _ := startRouter(t, fastRouter(set.urls()), app.RouterConfig{})
	c := &http.Client{}
	body := retrieveBody([]string{"alpha"}, 3, "bm25")
	for _, where := range []string{"router_fanout", "router_attempt"} {
		recovered.SetHook(func(w string) {
			if w == where {
				panic("injected")
			}
		})
		before := recovered.Count(where)
		code, _, b := post(t, c, rt.url(), "/retrieve", body)
		recovered.SetHook(nil)
		if code < 500 {
			t.Errorf("%s: status %d %s, want 5xx", where, code, b)
		}
		if recovered.Count(where) == before {
			t.Errorf("%s: no panic counted", where)
		}
		if code, _, b := post(t, c, rt.url(), "/retrieve", body); code != 200 {
			t.Fatalf("%s: after the panic: %d %s", where, code, b)
		}
	}
}

// TestRouterPrefixStable: shards list their exact retrievers in /healthz
// "prefix_stable"; the router's own /healthz lists the same ones (its
// retrievers are rlsearch.PrefixStable), and a replica of a shard that
// claims another set (another --dense-backend) is refused at start with
// ErrBuild naming the claim.
func TestRouterPrefixStable(t *testing.T) {
	s := newSynth(t, 300, 2)
	set := startShards(t, s.shards, s.manifest, nil, app.Config{})
	health := func(url string) map[string]any {
		t.Helper()
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	shardStable := health(set.nodes[0][0].url())["prefix_stable"]
	if l, ok := shardStable.([]any); !ok || len(l) == 0 {
		t.Fatalf("shard /healthz prefix_stable = %v, want BM25 at least", shardStable)
	}
	rt, _ := startRouter(t, fastRouter(set.urls()), app.RouterConfig{})
	if got := health(rt.url())["prefix_stable"]; !reflect.DeepEqual(got, shardStable) {
		t.Fatalf("router /healthz prefix_stable = %v, shards say %v", got, shardStable)
	}

	real := set.nodes[1][0].url()
	liar := serve(t, "", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.Error(w, "not proxied", 404)
			return
		}
		h := health(real)
		h["prefix_stable"] = []string{}
		json.NewEncoder(w).Encode(h)
	}))
	_, err := app.NewRouter(context.Background(), app.RouterConfig{Router: fastRouter(append(set.urls(), liar.url())), Logger: quiet})
	if !errors.Is(err, router.ErrBuild) || !strings.Contains(err.Error(), "prefix-stable") {
		t.Fatalf("err %v, want router.ErrBuild naming the prefix-stable retrievers", err)
	}
}
