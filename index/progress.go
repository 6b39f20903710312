package index

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressEvery is the interval of plain progress lines when the progress
// writer is not a terminal (a log file, journald, a CI log).
const progressEvery = 10 * time.Second

// progress reports build progress on a writer: a progress bar (bytes of
// corpus read, passages/s, ETA) when the writer is a terminal, else a plain
// line every progressEvery (passages, % of corpus bytes read, passages/s,
// ETA), so that logs are not filled with carriage returns. Phases after
// indexing (merging BM25 runs, writing) are announced by name, and in plain
// mode a line says every progressEvery that a long phase is still running.
// Not safe for concurrent use except that a phase's ticker runs on its own
// goroutine.
type progress struct {
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

func newBar(w io.Writer, total int64) *progress { return newLabelBar(w, total, "indexing") }

// newLabelBar is newBar for a pass named label.
func newLabelBar(w io.Writer, total int64, label string) *progress {
	p := &progress{w: w, label: label, total: total, now: time.Now, every: progressEvery}
	p.started = p.now()
	p.lastPrint = p.started
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
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

// update reports n passages indexed after bytes of the corpus were read.
func (p *progress) update(bytes int64, n int) {
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

// phase announces a named phase (ending the previous one). In plain mode,
// when tick is set, a goroutine says every p.every that it is still
// running (phases without their own progress lines).
func (p *progress) phase(name string, tick bool) {
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
func (p *progress) endPhase() {
	if p.stopTick != nil {
		close(p.stopTick)
		<-p.tickDone
		p.stopTick, p.tickDone = nil, nil
	}
}

func (p *progress) finish() {
	p.endPhase()
	if p.bar != nil {
		p.bar.Finish()
		fmt.Fprintln(p.w)
	}
}
