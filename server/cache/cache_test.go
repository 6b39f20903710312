package cache

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rlsearch/rlsearch"
)

// fakeRetriever answers each query with a deterministic list derived from
// its text and k (the oracle), counting queries and calls.
type fakeRetriever struct {
	name    string
	queries atomic.Int64
	calls   atomic.Int64
	gate    chan struct{} // when set, Retrieve waits for it
	fail    atomic.Int64  // calls that fail before succeeding
	panics  atomic.Bool
}

func (f *fakeRetriever) Name() string { return f.name }

func (f *fakeRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("%w: k = %d", rlsearch.ErrBadInput, k)
	}
	f.calls.Add(1)
	f.queries.Add(int64(len(queries)))
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.panics.Load() {
		panic("fake retriever panics")
	}
	if f.fail.Add(-1) >= 0 {
		return nil, errors.New("fake retriever fails")
	}
	return expected(queries, k), nil
}

func expected(queries []string, k int) [][]rlsearch.Hit {
	out := make([][]rlsearch.Hit, len(queries))
	for i, q := range queries {
		h := fnv.New64a()
		h.Write([]byte(q))
		s := h.Sum64()
		n := min(k, int(s%7))
		for j := 0; j < n; j++ {
			out[i] = append(out[i], rlsearch.Hit{Row: int32((s >> (8 * j)) % 1000), Score: float32(n - j)})
		}
		if out[i] == nil {
			out[i] = []rlsearch.Hit{}
		}
	}
	return out
}

// TestCachedEqualsUncached is the differential test: seeded batches of
// queries drawn with repeats from a small pool, at several k, through the
// cache equal the retriever's own answers, and the retriever sees each
// distinct (query, k) once while the cache holds it.
func TestCachedEqualsUncached(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(8))
	pool := make([]string, 200)
	for i := range pool {
		pool[i] = fmt.Sprintf("question %d about %c", i, 'a'+rune(i%26))
	}
	f := &fakeRetriever{name: "bm25"}
	c, err := New(Config{MaxBytes: 1 << 30, BuildID: "b1"})
	if err != nil {
		t.Fatal(err)
	}
	r := c.Wrap(f, nil)
	if r.Name() != "bm25" {
		t.Fatalf("Name %q", r.Name())
	}
	distinct := map[string]bool{}
	lookups := 0
	for round := 0; round < 300; round++ {
		n := rng.Intn(40)
		qs := make([]string, n)
		for i := range qs {
			qs[i] = pool[rng.Intn(len(pool))]
		}
		k := []int{0, 1, 3, 10}[rng.Intn(4)]
		got, err := r.Retrieve(ctx, qs, k)
		if err != nil {
			t.Fatal(err)
		}
		want := expected(qs, k)
		for i := range qs {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("round %d: query %q k %d: cached %v, retriever %v", round, qs[i], k, got[i], want[i])
			}
			distinct[fmt.Sprint(k, qs[i])] = true
		}
		uniq, _ := rlsearch.Distinct(qs)
		lookups += len(uniq)
	}
	if got := f.queries.Load(); got != int64(len(distinct)) {
		t.Errorf("the retriever saw %d queries, want each of the %d distinct (query, k) once", got, len(distinct))
	}
	st := c.Stats()
	if st.Misses != uint64(len(distinct)) || st.Hits+st.Misses != uint64(lookups) || st.Entries != len(distinct) {
		t.Errorf("stats %+v: want %d misses, %d lookups, %d entries", st, len(distinct), lookups, len(distinct))
	}
	// Callers own their lists: changing one changes nothing cached.
	a, _ := r.Retrieve(ctx, []string{pool[3]}, 10)
	if len(a[0]) > 0 {
		a[0][0].Row = -99
	}
	b, _ := r.Retrieve(ctx, []string{pool[3]}, 10)
	if !slices.Equal(b[0], expected([]string{pool[3]}, 10)[0]) {
		t.Errorf("a caller's change reached the cache: %v", b[0])
	}
}

// TestKeys checks what separates entries: k, the retriever, the build id;
// and what joins them: the key function.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	c, _ := New(Config{MaxBytes: 1 << 20, BuildID: "b1"})
	c2, _ := New(Config{MaxBytes: 1 << 20, BuildID: "b2"})
	f1, f2, f3 := &fakeRetriever{name: "bm25"}, &fakeRetriever{name: "e5"}, &fakeRetriever{name: "bm25"}
	fold := c.Wrap(f1, strings.ToLower)
	exact := c.Wrap(f2, nil)
	other := c2.Wrap(f3, strings.ToLower)
	for _, call := range []struct {
		r rlsearch.Retriever
		q string
		k int
	}{{fold, "Paris", 3}, {fold, "paris", 3}, {fold, "PARIS", 5}, {exact, "Paris", 3}, {exact, "paris", 3}, {other, "paris", 3}} {
		if _, err := call.r.Retrieve(ctx, []string{call.q}, call.k); err != nil {
			t.Fatal(err)
		}
	}
	if f1.queries.Load() != 2 || f2.queries.Load() != 2 || f3.queries.Load() != 1 {
		t.Errorf("retrieved %d (want 2: Paris/paris share a key, k 5 does not), %d (want 2: exact text), %d (want 1: another build's cache)", f1.queries.Load(), f2.queries.Load(), f3.queries.Load())
	}
	// A key match returns the list retrieved for the first text.
	a, _ := fold.Retrieve(ctx, []string{"pArIs"}, 3)
	if !slices.Equal(a[0], expected([]string{"Paris"}, 3)[0]) {
		t.Errorf("pArIs: %v, want Paris's list", a[0])
	}
}

// TestEviction fills a small cache and checks the byte bound, the LRU
// order and the eviction count.
func TestEviction(t *testing.T) {
	ctx := context.Background()
	f := &fakeRetriever{name: "e5"}
	probe := []string{"q-000"}
	c, _ := New(Config{MaxBytes: 20 * 200, BuildID: "b"})
	r := c.Wrap(f, nil)
	for i := 0; i < 100; i++ {
		q := fmt.Sprintf("q-%03d", i)
		if _, err := r.Retrieve(ctx, []string{q}, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Retrieve(ctx, probe, 10); err != nil { // keep q-000 recent
			t.Fatal(err)
		}
		if st := c.Stats(); st.Bytes > st.MaxBytes {
			t.Fatalf("after %d inserts: %d bytes > bound %d", i, st.Bytes, st.MaxBytes)
		}
	}
	st := c.Stats()
	if st.Evictions == 0 || st.Entries == 0 || int64(st.Entries)*EntryOverhead > st.MaxBytes {
		t.Fatalf("stats %+v: want evictions and entries within the bound", st)
	}
	before := f.queries.Load()
	r.Retrieve(ctx, probe, 10)
	if f.queries.Load() != before {
		t.Errorf("the most recently used entry (q-000) was evicted")
	}
	r.Retrieve(ctx, []string{"q-001"}, 10)
	if f.queries.Load() != before+1 {
		t.Errorf("the least recently used entry (q-001) is still cached")
	}
	// An entry larger than the whole cache is answered but not kept.
	tiny, _ := New(Config{MaxBytes: 10})
	tr := tiny.Wrap(f, nil)
	for i := 0; i < 2; i++ {
		if _, err := tr.Retrieve(ctx, []string{"x"}, 3); err != nil {
			t.Fatal(err)
		}
	}
	if st := tiny.Stats(); st.Entries != 0 || st.Misses != 2 {
		t.Errorf("oversized entries: %+v, want none kept and 2 misses", st)
	}
}

// TestConcurrentShared sends the same queries from many goroutines while
// the retriever is blocked: it must see each query once, every caller
// gets the oracle's lists, and the waiting ones count as shared (-race).
func TestConcurrentShared(t *testing.T) {
	ctx := context.Background()
	f := &fakeRetriever{name: "e5", gate: make(chan struct{})}
	c, _ := New(Config{MaxBytes: 1 << 20})
	r := c.Wrap(f, nil)
	qs := []string{"who wrote hamlet", "capital of france", "who wrote hamlet"}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.Retrieve(ctx, qs, 5)
			if err != nil {
				errs <- err
				return
			}
			want := expected(qs, 5)
			for i := range qs {
				if !slices.Equal(got[i], want[i]) {
					errs <- fmt.Errorf("query %q: %v, want %v", qs[i], got[i], want[i])
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(f.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := c.Stats()
	if f.queries.Load() != 2 || st.Misses != 2 || st.Hits+st.Shared != 62 {
		t.Errorf("retriever saw %d queries, stats %+v: want 2 retrieved once, 62 answered by the cache or the shared flight", f.queries.Load(), st)
	}
}

// TestFailuresNotCached: an error is returned and not cached; a caller
// waiting on a failed retrieval (its owner's context ended) retrieves for
// itself; a panicking retriever releases the waiters.
func TestFailuresNotCached(t *testing.T) {
	ctx := context.Background()
	f := &fakeRetriever{name: "bm25"}
	f.fail.Store(1)
	c, _ := New(Config{MaxBytes: 1 << 20})
	r := c.Wrap(f, nil)
	if _, err := r.Retrieve(ctx, []string{"q"}, 3); err == nil {
		t.Fatal("no error from a failing retriever")
	}
	got, err := r.Retrieve(ctx, []string{"q"}, 3)
	if err != nil || !slices.Equal(got[0], expected([]string{"q"}, 3)[0]) {
		t.Fatalf("after a failure: %v, %v; want the retriever's list (errors are not cached)", got, err)
	}
	if _, err := r.Retrieve(ctx, []string{"q"}, -1); !errors.Is(err, rlsearch.ErrBadInput) {
		t.Errorf("k = -1: %v, want the retriever's ErrBadInput", err)
	}

	// Owner cancelled while a second caller waits on its flight.
	g := &fakeRetriever{name: "e5", gate: make(chan struct{})}
	rg := c.Wrap(g, nil)
	octx, cancel := context.WithCancel(ctx)
	ownerDone := make(chan error, 1)
	go func() { _, err := rg.Retrieve(octx, []string{"slow"}, 3); ownerDone <- err }()
	for g.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	waiterDone := make(chan error, 1)
	var waiterGot [][]rlsearch.Hit
	go func() {
		var err error
		waiterGot, err = rg.Retrieve(ctx, []string{"slow"}, 3)
		waiterDone <- err
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	if err := <-ownerDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("owner: %v, want context.Canceled", err)
	}
	close(g.gate)
	if err := <-waiterDone; err != nil || !slices.Equal(waiterGot[0], expected([]string{"slow"}, 3)[0]) {
		t.Fatalf("waiter after the owner left: %v, %v; want its own retrieval", waiterGot, err)
	}

	// A panic in the retriever releases waiters with an error.
	p := &fakeRetriever{name: "p", gate: make(chan struct{})}
	p.panics.Store(true)
	rp := c.Wrap(p, nil)
	go func() {
		defer func() { recover() }()
		rp.Retrieve(ctx, []string{"boom"}, 3)
	}()
	for p.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	res := make(chan error, 1)
	go func() {
		defer func() {
			if recover() != nil { // its own retry panicked too
				res <- errors.New("panicked")
			}
		}()
		_, err := rp.Retrieve(ctx, []string{"boom"}, 3)
		res <- err
	}()
	time.Sleep(20 * time.Millisecond)
	close(p.gate)
	select {
	case <-res: // its own retry panicked or failed; it was released
	case <-time.After(5 * time.Second):
		t.Fatal("a waiter is stuck after the retriever panicked")
	}
}

// TestMetrics checks the exposition: per-retriever lookups by result,
// bytes, entries, the bound and the hit ratio.
func TestMetrics(t *testing.T) {
	ctx := context.Background()
	c, _ := New(Config{MaxBytes: 1 << 20, BuildID: "b"})
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	r := c.Wrap(&fakeRetriever{name: "bm25"}, nil)
	r.Retrieve(ctx, []string{"a", "b"}, 3)
	r.Retrieve(ctx, []string{"a", "a", "c"}, 3)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				name += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case m.Counter != nil:
				got[name] = m.GetCounter().GetValue()
			case m.Gauge != nil:
				got[name] = m.GetGauge().GetValue()
			}
		}
	}
	for name, v := range map[string]float64{
		"rlsearch_cache_lookups_total,result=hit,retriever=bm25":    1,
		"rlsearch_cache_lookups_total,result=miss,retriever=bm25":   3,
		"rlsearch_cache_lookups_total,result=shared,retriever=bm25": 0,
		"rlsearch_cache_entries":                                    3,
		"rlsearch_cache_hit_ratio":                                  0.25,
		"rlsearch_cache_max_bytes":                                  1 << 20,
		"rlsearch_cache_evictions_total":                            0,
	} {
		if g, ok := got[name]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
		}
	}
	if b := got["rlsearch_cache_bytes"]; b <= 3*EntryOverhead {
		t.Errorf("rlsearch_cache_bytes = %v, want more than 3 entries' overhead", b)
	}
}

// TestDisabled: MaxBytes rlsearch.Off (any negative value) is no cache
// (Wrap returns the retriever), 0 the default size (the options
// convention, rlsearch.Off).
func TestDisabled(t *testing.T) {
	for _, off := range []int64{rlsearch.Off, -5} {
		if c, err := New(Config{MaxBytes: off}); err != nil || c != nil {
			t.Fatalf("New(MaxBytes %d) = %v, %v; want nil, nil (off)", off, c, err)
		}
	}
	def, err := New(Config{})
	if err != nil || def == nil || def.Stats().MaxBytes != DefaultMaxBytes {
		t.Fatalf("New(MaxBytes 0) = %v, %v; want a cache of DefaultMaxBytes %d", def, err, DefaultMaxBytes)
	}
	c, _ := New(Config{MaxBytes: rlsearch.Off})
	f := &fakeRetriever{name: "x"}
	if r := c.Wrap(f, nil); r != rlsearch.Retriever(f) {
		t.Errorf("a nil cache wrapped the retriever")
	}
	if (c.Stats() != Stats{}) {
		t.Errorf("nil cache stats %+v", c.Stats())
	}
}
