package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Pass reports the progress of one pass over a corpus file (index builds,
// counting a sharded build's passages) on a writer: a progress bar (bytes of
// corpus read, passages/s, ETA) when the writer is a terminal, else a plain
// line every progressEvery (passages, % of corpus bytes read, passages/s,
// ETA), so that logs are not filled with carriage returns. Phases after
// indexing (merging BM25 runs, writing) are announced by name, and in plain
// mode a line says every progressEvery that a long phase is still running.
// Not safe for concurrent use except that a phase's ticker runs on its own
// goroutine. A nil writer makes every method a no-op.
type Pass struct {
	w         io.Writer
	label     string // "indexing", "counting passages"
	bar       *progressbar.ProgressBar
	total     int64 // corpus bytes, ≤ 0 when unknown (a pipe)
	started   time.Time
	lastPrint time.Time
	now       func() time.Time
	every     time.Duration

	mu       sync.Mutex // serialises writes of the phase ticker
	stopTick chan struct{}
	tickDone chan struct{}
}

// NewPass reports on w (nil = silent) a pass named label ("indexing",
// "counting passages") over a file of total bytes (≤ 0 when unknown).
func NewPass(w io.Writer, total int64, label string) *Pass {
	p := &Pass{w: w, label: label, total: total, now: time.Now, every: Every}
	p.started = p.now()
	p.lastPrint = p.started
	if w == nil {
		return p
	}
	if isTerminal(w) {
		p.bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
		)
	}
	return p
}

// Update reports n passages done after bytes of the file were read.
func (p *Pass) Update(bytes int64, n int) {
	if p.w == nil {
		return
	}
	now := p.now()
	elapsed := now.Sub(p.started)
	rate := float64(n) / max(elapsed.Seconds(), 1e-9)
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s: %d passages (%.0f passages/s)", p.label, n, rate))
		p.bar.Set64(bytes)
		return
	}
	if now.Sub(p.lastPrint) < p.every {
		return
	}
	p.lastPrint = now
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.total > 0 && bytes > 0 {
		frac := float64(bytes) / float64(p.total)
		eta := time.Duration(float64(elapsed) * (1 - frac) / frac).Round(time.Second)
		fmt.Fprintf(p.w, "%s: %d passages, %.1f%% of corpus bytes read, %.0f passages/s, ETA %s\n", p.label, n, 100*frac, rate, eta)
		return
	}
	fmt.Fprintf(p.w, "%s: %d passages, %.0f passages/s\n", p.label, n, rate)
}

// Phase announces a named phase (ending the previous one). In plain mode,
// when tick is set, a goroutine says every Every that it is still
// running (phases without their own progress lines).
func (p *Pass) Phase(name string, tick bool) {
	p.endPhase()
	if p.w == nil {
		return
	}
	if p.bar != nil {
		p.bar.Describe(name)
		return
	}
	p.mu.Lock()
	fmt.Fprintf(p.w, "phase: %s\n", name)
	p.mu.Unlock()
	if !tick {
		return
	}
	p.stopTick, p.tickDone = make(chan struct{}), make(chan struct{})
	go func(start time.Time, stop, done chan struct{}) {
		defer close(done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.mu.Lock()
				fmt.Fprintf(p.w, "phase: %s, %s so far\n", name, time.Since(start).Round(time.Second))
				p.mu.Unlock()
			}
		}
	}(time.Now(), p.stopTick, p.tickDone)
}

// endPhase stops the ticker of the current phase, if any.
func (p *Pass) endPhase() {
	if p.stopTick != nil {
		close(p.stopTick)
		<-p.tickDone
		p.stopTick, p.tickDone = nil, nil
	}
}

// Finish ends the current phase and the bar (a newline after it on a
// terminal).
func (p *Pass) Finish() {
	p.endPhase()
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
