package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rlsearch/rlsearch"
)

var batchQueries = []string{"paris", "capital of france", "japan tokyo", "is", "europe country", "berlin", "nothing", "café", "the capital"}

// callerInput is caller i's queries and k: 1 to 3 queries, k from 1 to 7.
func callerInput(i int) ([]string, int) {
	n := 1 + i%3
	q := make([]string, n)
	for j := range q {
		q[j] = batchQueries[(i*5+j)%len(batchQueries)]
	}
	return q, 1 + i%7
}

func TestBatcherMatchesSerial(t *testing.T) {
	for _, tc := range []struct {
		maxBatch int
		maxWait  time.Duration
	}{
		{16, 2 * time.Millisecond},
		{1, time.Millisecond},
		{1000, 0},
		{5, 50 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("maxBatch=%d/maxWait=%v", tc.maxBatch, tc.maxWait), func(t *testing.T) {
			oracle := newTokenRetriever("e5", testCorpus)
			under := newTokenRetriever("e5", testCorpus)
			under.delay = time.Millisecond // let calls pile up behind a running batch
			b := NewBatcher(under, tc.maxBatch, tc.maxWait)
			defer b.(io.Closer).Close()

			const callers = 64
			want := make([][][]rlsearch.Hit, callers)
			totalQueries := 0
			for i := range callers {
				q, k := callerInput(i)
				totalQueries += len(q)
				got, err := oracle.Retrieve(context.Background(), q, k)
				if err != nil {
					t.Fatal(err)
				}
				want[i] = got
			}
			got := make([][][]rlsearch.Hit, callers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() {
					<-start
					q, k := callerInput(i)
					lists, err := b.Retrieve(context.Background(), q, k)
					if err != nil {
						t.Errorf("caller %d: %v", i, err)
					}
					got[i] = lists
				})
			}
			close(start)
			wg.Wait()
			for i := range callers {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("caller %d: batched %v, serial %v", i, got[i], want[i])
				}
			}
			calls := under.calls.Load()
			if got := b.(*Batcher).Calls(); got != calls {
				t.Errorf("Calls() = %d, underlying saw %d", got, calls)
			}
			if under.nq.Load() != int64(totalQueries) {
				t.Errorf("underlying saw %d queries, want %d (each once)", under.nq.Load(), totalQueries)
			}
			if tc.maxBatch >= 3 && calls >= callers {
				t.Errorf("underlying retriever called %d times for %d callers; batching merged nothing", calls, callers)
			}
			t.Logf("%d callers, %d queries -> %d underlying calls", callers, totalQueries, calls)
		})
	}
}

// countingRetriever records the batch sizes it receives and can fail.
type countingRetriever struct {
	mu     sync.Mutex
	sizes  []int
	ks     []int
	stable bool // PrefixStable
	err    error
	block  chan struct{}
	enter  chan struct{}
	ctxs   chan context.Context
}

func (c *countingRetriever) Name() string { return "counting" }

// PrefixStable is c.stable: a stable retriever's mixed widths are merged
// into one call at the largest k.
func (c *countingRetriever) PrefixStable() bool { return c.stable }

func (c *countingRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	c.mu.Lock()
	c.sizes = append(c.sizes, len(queries))
	c.ks = append(c.ks, k)
	c.mu.Unlock()
	if c.ctxs != nil {
		c.ctxs <- ctx
	}
	if c.enter != nil {
		c.enter <- struct{}{}
	}
	if c.block != nil {
		select {
		case <-c.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.err != nil {
		return nil, c.err
	}
	out := make([][]rlsearch.Hit, len(queries))
	for i := range out {
		for r := range k {
			out[i] = append(out[i], rlsearch.Hit{Row: int32(r), Score: float32(k - r)})
		}
	}
	return out, nil
}

// TestBatcherMergesWidths: calls of different widths queued together are
// answered in one underlying call at the largest k when the retriever is
// prefix-stable (exact), and in one call per distinct k when it is not
// (an approximate backend's top 2 is not the first 2 of its top 5).
func TestBatcherMergesWidths(t *testing.T) {
	for _, tc := range []struct {
		stable bool
		sizes  []int
		ks     []int
	}{
		{true, []int{1, 6}, []int{1, 5}},
		{false, []int{1, 2, 2, 2}, []int{1, 2, 5, 3}},
	} {
		under := &countingRetriever{block: make(chan struct{}), enter: make(chan struct{}, 10), stable: tc.stable}
		b := NewBatcher(under, 100, 20*time.Millisecond)

		// The first call occupies the owner; the next three queue behind it
		// and must form one batch.
		var wg sync.WaitGroup
		wg.Go(func() { b.Retrieve(context.Background(), []string{"a"}, 1) })
		<-under.enter
		res := make([][][]rlsearch.Hit, 3)
		for i, k := range []int{2, 5, 3} {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 20 * time.Millisecond) // queue in this order
				l, err := b.Retrieve(context.Background(), []string{"x", "y"}, k)
				if err != nil {
					t.Error(err)
				}
				res[i] = l
			})
		}
		time.Sleep(150 * time.Millisecond) // let the three reach the queue (generous for loaded CI)
		go func() {
			for range under.enter {
			}
		}()
		close(under.block)
		wg.Wait()
		b.(io.Closer).Close()
		close(under.enter)
		under.mu.Lock()
		if !reflect.DeepEqual(under.sizes, tc.sizes) || !reflect.DeepEqual(under.ks, tc.ks) {
			t.Errorf("stable %v: underlying batches %v with k %v, want %v with k %v", tc.stable, under.sizes, under.ks, tc.sizes, tc.ks)
		}
		under.mu.Unlock()
		for i, k := range []int{2, 5, 3} {
			for _, l := range res[i] {
				if len(l) != k {
					t.Errorf("stable %v: caller with k=%d got a list of %d", tc.stable, k, len(l))
				}
			}
		}
	}
}

func TestBatcherLargeCallIsChunked(t *testing.T) {
	under := &countingRetriever{}
	b := NewBatcher(under, 4, time.Millisecond)
	defer b.(io.Closer).Close()
	q := make([]string, 10)
	lists, err := b.Retrieve(context.Background(), q, 2)
	if err != nil || len(lists) != 10 {
		t.Fatalf("got %d lists, %v; want 10", len(lists), err)
	}
	if !reflect.DeepEqual(under.sizes, []int{4, 4, 2}) {
		t.Errorf("underlying batch sizes %v, want [4 4 2]: never more than maxBatch", under.sizes)
	}
}

func TestBatcherErrorReachesEveryCaller(t *testing.T) {
	boom := errors.New("encoder: out of memory")
	under := &countingRetriever{err: boom, block: make(chan struct{}), enter: make(chan struct{}, 10)}
	b := NewBatcher(under, 100, 10*time.Millisecond)
	defer b.(io.Closer).Close()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	wg.Go(func() { _, errs[0] = b.Retrieve(context.Background(), []string{"a"}, 1) })
	<-under.enter
	for i := 1; i < 5; i++ {
		wg.Go(func() { _, errs[i] = b.Retrieve(context.Background(), []string{"a"}, 1) })
	}
	time.Sleep(20 * time.Millisecond)
	close(under.block)
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, boom) {
			t.Errorf("caller %d: err %v, want %v", i, err, boom)
		}
	}
}

func TestBatcherCallerCancel(t *testing.T) {
	under := &countingRetriever{block: make(chan struct{}), ctxs: make(chan context.Context, 10)}
	b := NewBatcher(under, 100, 0)
	defer b.(io.Closer).Close()

	ctx1, cancel1 := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Retrieve(ctx1, []string{"a"}, 1)
		errc <- err
	}()
	inner := <-under.ctxs
	cancel1()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("canceled caller still waiting after 5 s")
	}
	// Its only caller is gone, so the underlying call is canceled too.
	select {
	case <-inner.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("underlying call not canceled after its only caller left")
	}

	// An already canceled context never enters the queue.
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := b.Retrieve(ctx2, []string{"a"}, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestBatcherPartialCancelKeepsBatch(t *testing.T) {
	under := &countingRetriever{block: make(chan struct{}), ctxs: make(chan context.Context, 10), enter: make(chan struct{}, 10)}
	b := NewBatcher(under, 100, 20*time.Millisecond)
	defer b.(io.Closer).Close()
	// Occupy the owner, then queue two callers, one of which leaves
	// while the merged call runs.
	go b.Retrieve(context.Background(), []string{"first"}, 1)
	<-under.ctxs
	<-under.enter
	ctxA, cancelA := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var errA, errB error
	var listsB [][]rlsearch.Hit
	wg.Go(func() { _, errA = b.Retrieve(ctxA, []string{"a"}, 1) })
	wg.Go(func() { listsB, errB = b.Retrieve(context.Background(), []string{"b"}, 2) })
	time.Sleep(100 * time.Millisecond) // both queue behind the first call
	under.block <- struct{}{}          // release the first call
	merged := <-under.ctxs
	<-under.enter
	cancelA()
	time.Sleep(10 * time.Millisecond)
	if merged.Err() != nil {
		t.Fatal("merged call canceled although one of its callers is still waiting")
	}
	close(under.block)
	wg.Wait()
	if !errors.Is(errA, context.Canceled) {
		t.Errorf("canceled caller: %v, want context.Canceled", errA)
	}
	if errB != nil || len(listsB) != 1 || len(listsB[0]) != 2 {
		t.Errorf("remaining caller: %v %v, want one list of 2", listsB, errB)
	}
}

func TestBatcherClose(t *testing.T) {
	under := &countingRetriever{}
	r := NewBatcher(under, 8, time.Millisecond)
	if got := r.Name(); got != "counting" {
		t.Errorf("Name %q, want the underlying name", got)
	}
	if _, err := r.Retrieve(context.Background(), []string{"a"}, 1); err != nil {
		t.Fatal(err)
	}
	c := r.(io.Closer)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := r.Retrieve(context.Background(), []string{"a"}, 1); !errors.Is(err, ErrBatcherClosed) {
		t.Fatalf("Retrieve after Close: %v, want ErrBatcherClosed", err)
	}
	if l, err := r.Retrieve(context.Background(), nil, 3); err != nil || len(l) != 0 {
		t.Fatalf("no queries: %v %v, want an empty result", l, err)
	}
}

// TestBatcherCloseConcurrent closes while callers are active: each gets
// either its answer or ErrBatcherClosed, and nothing hangs.
func TestBatcherCloseConcurrent(t *testing.T) {
	under := newTokenRetriever("e5", testCorpus)
	r := NewBatcher(under, 4, time.Millisecond)
	var wg sync.WaitGroup
	var ok, closed atomic.Int64
	for i := range 64 {
		wg.Go(func() {
			q, k := callerInput(i)
			_, err := r.Retrieve(context.Background(), q, k)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrBatcherClosed):
				closed.Add(1)
			default:
				t.Errorf("caller %d: %v", i, err)
			}
		})
	}
	time.Sleep(time.Millisecond)
	r.(io.Closer).Close()
	wg.Wait()
	t.Logf("%d answered, %d closed", ok.Load(), closed.Load())
}

type panicRetriever struct{}

func (panicRetriever) Name() string { return "panicky" }
func (panicRetriever) Retrieve(context.Context, []string, int) ([][]rlsearch.Hit, error) {
	panic("kernel exploded")
}

func TestBatcherRecoversPanic(t *testing.T) {
	r := NewBatcher(panicRetriever{}, 8, 0)
	defer r.(io.Closer).Close()
	for range 2 { // the owner goroutine survives the first panic
		if _, err := r.Retrieve(context.Background(), []string{"a"}, 1); err == nil {
			t.Fatal("panic became a success")
		}
	}
}
