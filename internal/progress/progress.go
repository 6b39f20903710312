package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Every is the interval of plain progress lines.
const Every = 10 * time.Second

// Counter counts done items out of a known total. A nil writer makes every
// method a no-op. Safe for concurrent use.
type Counter struct {
	w     io.Writer
	label string
	unit  string
	total int

	mu    sync.Mutex
	bar   *progressbar.ProgressBar
	done  int
	start time.Time
	last  time.Time
}

// New reports on w (nil = silent) under label ("indexing: title",
// "mutate-eval"), counting unit ("vectors", "programs") out of total.
func New(w io.Writer, label, unit string, total int) *Counter {
	now := time.Now()
	c := &Counter{w: w, label: label, unit: unit, total: total, start: now, last: now}
	if isTerminal(w) {
		c.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString(unit),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
		)
	}
	return c
}

// Add counts n more items done.
func (c *Counter) Add(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.done + n)
}

// Set says done items are done in all.
func (c *Counter) Set(done int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(done)
}

func (c *Counter) setLocked(done int) {
	c.done = done
	if c.w == nil {
		return
	}
	if c.bar != nil {
		c.bar.Set(done)
		return
	}
	if time.Since(c.last) < Every && done < c.total {
		return
	}
	c.last = time.Now()
	rate := float64(done) / max(time.Since(c.start).Seconds(), 1e-9)
	eta := time.Duration(float64(max(c.total-done, 0)) / max(rate, 1e-9) * float64(time.Second))
	fmt.Fprintf(c.w, "%s: %d of %d %s, %.1f %s/s, ETA %s\n", c.label, done, c.total, c.unit, rate, c.unit, eta.Round(time.Second))
}

// Finish ends the bar (a newline after it on a terminal).
func (c *Counter) Finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bar != nil {
		c.bar.Finish()
		fmt.Fprintln(c.w)
	}
}

// isTerminal reports whether w is a terminal (a progress bar), not a log.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
