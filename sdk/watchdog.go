package sdk

import (
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlsearch/rlsearch"
)

// overloaded returns an error wrapping rlsearch.ErrOverloaded when the
// heap guard stopped one of results' programs (Serve answers it 503 with
// Retry-After), else nil.
func overloaded(results []Result) error {
	for i, r := range results {
		if r.Code == CodeOverloaded {
			return fmt.Errorf("%w: program %d: %s", rlsearch.ErrOverloaded, i, r.Error)
		}
	}
	return nil
}

// The process heap guard is the last resort behind the per-program memory
// budget. A program's own memory is charged to it before each operation
// runs (meter.go, Budgets.MaxMemoryBytes): deterministic, a function of the
// program alone, so its budget_exceeded is part of its answer. The guard
// watches the process instead: a goroutine samples the Go heap every
// millisecond while programs run and stops every program during which the
// heap grew by more than Config.MaxHeapBytes (uncharged work, other
// requests' garbage); Thread.Cancel is safe from any goroutine and is seen
// at the next step. Such a stop says nothing about the program, so it ends
// with CodeOverloaded (wrapping rlsearch.ErrOverloaded), never
// budget_exceeded, and Serve answers the whole request 503 with
// Retry-After: a retry gets the program's real answer. The peak is bounded
// by the limit plus one allocation.
var watch struct {
	mu      sync.Mutex
	states  map[*execState]uint64 // heap bytes when the program started
	running bool
	last    uint64
}

const watchEvery = time.Millisecond

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func watchStart(st *execState) {
	watch.mu.Lock()
	defer watch.mu.Unlock()
	if watch.states == nil {
		watch.states = map[*execState]uint64{}
	}
	if !watch.running {
		watch.last = heapBytes()
		watch.running = true
		go watchLoop()
	}
	watch.states[st] = watch.last
}

func watchStop(st *execState) {
	watch.mu.Lock()
	delete(watch.states, st)
	watch.mu.Unlock()
}

func watchLoop() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for range t.C {
		h := heapBytes()
		watch.mu.Lock()
		watch.last = h
		if len(watch.states) == 0 {
			watch.running = false
			watch.mu.Unlock()
			return
		}
		for st, base := range watch.states {
			if lim := uint64(st.rt.cfg.MaxHeapBytes); h > base+lim {
				st.cancel(newErr(CodeOverloaded, rlsearch.ErrOverloaded, "server overloaded: the process heap grew by more than %d MiB while the program ran; retry later", lim>>20))
			}
		}
		watch.mu.Unlock()
	}
}

// releaseThreshold is the charge above which a program's end returns free
// memory to the operating system: Go's background scavenger otherwise
// keeps the pages for minutes (issue 13 measured RSS at 3.7 GB four
// minutes after a 3.5 GB program).
const releaseThreshold = 16 << 20

// releaseMinGap spaces the releases: debug.FreeOSMemory forces a full
// collection, whose cost grows with the live heap (the index).
const releaseMinGap = time.Second

var release struct {
	running atomic.Bool
	pending atomic.Bool
	count   atomic.Int64 // releases done (tests)
}

// releaseMemory returns free heap pages to the OS in the background after a
// program that was charged more than releaseThreshold bytes. One goroutine
// does the releases, at most one per releaseMinGap; a request that comes
// while it runs or waits is served by one more release after the gap, so
// the last large program's memory is always returned.
func releaseMemory(charged uint64) {
	if charged < releaseThreshold {
		return
	}
	release.pending.Store(true)
	if !release.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for {
			for release.pending.Swap(false) {
				debug.FreeOSMemory()
				release.count.Add(1)
				time.Sleep(releaseMinGap)
			}
			release.running.Store(false)
			// A request may have set pending after the loop's last Swap and
			// seen running still true: take the job back if so.
			if !release.pending.Load() || !release.running.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}
