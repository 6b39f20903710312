package batch

import "time"

// Config configures a Gatherer. Zero fields mean the documented defaults.
type Config[T any] struct {
	// Max is the most Size a batch holds (values < 1 mean 1).
	Max int
	// Wait is how long a batch waits to fill once opened (≤ 0: no waiting).
	Wait time.Duration
	// Size is an item's share of Max (nil: 1 per item).
	Size func(T) int
	// Arrived is when an item was queued; when set, a batch waits until
	// Wait after its first item arrived rather than after it opened.
	Arrived func(T) time.Time
	// Alone reports items that must form a batch by themselves (nil: none).
	Alone func(T) bool
	// Stop, when closed, ends gathering: the batch being gathered is
	// returned, then the carried item (if any) alone, then Next reports
	// false without reading In again. nil: never.
	Stop <-chan struct{}
}

// Gatherer cuts a channel of items into batches. Not safe for concurrent
// use: one owner goroutine calls Next.
type Gatherer[T any] struct {
	in       <-chan T
	cfg      Config[T]
	carry    T
	hasCarry bool
	stopped  bool
	timer    *time.Timer
}

// New gathers items from in.
func New[T any](in <-chan T, cfg Config[T]) *Gatherer[T] {
	if cfg.Max < 1 {
		cfg.Max = 1
	}
	if cfg.Size == nil {
		cfg.Size = func(T) int { return 1 }
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Gatherer[T]{in: in, cfg: cfg, timer: t}
}

// Next blocks until a batch is ready and returns it (a new slice, owned by
// the caller), or returns false once Stop is closed and nothing is left.
func (g *Gatherer[T]) Next() ([]T, bool) {
	var first T
	switch {
	case g.hasCarry:
		first, g.hasCarry = g.carry, false
		var zero T
		g.carry = zero
	case g.stopped:
		return nil, false
	default:
		select {
		case first = <-g.in:
		case <-g.cfg.Stop:
			g.stopped = true
			return nil, false
		}
	}
	batch := []T{first}
	if g.stopped || (g.cfg.Alone != nil && g.cfg.Alone(first)) {
		return batch, true
	}
	n := g.cfg.Size(first)
	wait := g.cfg.Wait
	if g.cfg.Arrived != nil {
		wait -= time.Since(g.cfg.Arrived(first))
	}
	var timeout <-chan time.Time
	if wait > 0 && n < g.cfg.Max {
		g.timer.Reset(wait)
		timeout = g.timer.C
		defer g.timer.Stop()
	}
	for n < g.cfg.Max {
		var it T
		if timeout == nil {
			select {
			case it = <-g.in:
			case <-g.cfg.Stop:
				g.stopped = true
				return batch, true
			default:
				return batch, true
			}
		} else {
			select {
			case it = <-g.in:
			case <-timeout:
				return batch, true
			case <-g.cfg.Stop:
				g.stopped = true
				return batch, true
			}
		}
		s := g.cfg.Size(it)
		if n+s > g.cfg.Max || (g.cfg.Alone != nil && g.cfg.Alone(it)) {
			g.carry, g.hasCarry = it, true
			return batch, true
		}
		batch = append(batch, it)
		n += s
	}
	return batch, true
}

// Run calls fn with every batch, in order, until Next reports false: the
// whole body of an owner goroutine.
func (g *Gatherer[T]) Run(fn func([]T)) {
	for {
		b, ok := g.Next()
		if !ok {
			return
		}
		fn(b)
	}
}
