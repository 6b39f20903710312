// Package recovered turns a panic in a worker goroutine (mutate workers,
// per-query rerank, router fan-out, batchers) into an error for the
// request it served, with the stack logged (log/slog's default logger) and
// the panic counted in PanicsTotal, so one bad request never kills the
// process.
//
// Use it as the first deferred call of the goroutine:
//
//	go func() {
//		defer recovered.Guard("rerank", &errs[i])
//		recovered.Probe("rerank")
//		...
//	}()
//
// Errors wrap ErrPanic; HTTP layers answer them with 500. Safe for
// concurrent use.
package recovered

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrPanic is wrapped by every error Guard makes of a panic.
var ErrPanic = errors.New("recovered panic")

// PanicsTotal counts recovered panics by where (the goroutine kind:
// "mutate", "rerank", "router_fanout", "router_attempt", "batcher").
// Servers register it in their registry (Register).
var PanicsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "rlsearch_recovered_panics_total",
	Help: "Panics in worker goroutines recovered into a request's error, by goroutine kind.",
}, []string{"where"})

// Register adds PanicsTotal to reg; registering it twice is not an error.
func Register(reg prometheus.Registerer) error {
	if err := reg.Register(PanicsTotal); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return err
		}
	}
	return nil
}

// Of returns the error for a recovered panic value p in where, after
// logging its stack and counting it. Call it from a deferred function
// that called recover().
func Of(where string, p any) error {
	PanicsTotal.WithLabelValues(where).Inc()
	c, _ := counts.LoadOrStore(where, new(atomic.Uint64))
	c.(*atomic.Uint64).Add(1)
	slog.Default().Error("recovered panic", "where", where, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return fmt.Errorf("%w in %s: %v", ErrPanic, where, p)
}

// Guard recovers a panic of the calling goroutine into *errp (see Of).
// It must be called directly by defer.
func Guard(where string, errp *error) {
	if p := recover(); p != nil {
		*errp = Of(where, p)
	}
}

var counts sync.Map // where → *atomic.Uint64

// Count is how many panics were recovered in where since the process
// started (PanicsTotal's value, for tests and logs).
func Count(where string) uint64 {
	if c, ok := counts.Load(where); ok {
		return c.(*atomic.Uint64).Load()
	}
	return 0
}

var hook atomic.Pointer[func(where string)]

// SetHook installs f, called by Probe with its where; tests use it to
// inject panics. nil removes it.
func SetHook(f func(where string)) {
	if f == nil {
		hook.Store(nil)
		return
	}
	hook.Store(&f)
}

// Probe calls the hook of SetHook, if any (a test's panic injection
// point; one atomic load otherwise).
func Probe(where string) {
	if f := hook.Load(); f != nil {
		(*f)(where)
	}
}
