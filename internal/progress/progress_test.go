package progress

import (
	"strings"
	"sync"
	"testing"
)

func TestPlainLines(t *testing.T) {
	var sb strings.Builder
	c := New(&sb, "mutate", "programs", 3)
	c.Add(1) // within Every of the start: no line
	if sb.Len() != 0 {
		t.Fatalf("a line before the interval: %q", sb.String())
	}
	c.Add(2) // the last item always reports
	c.Finish()
	if got := sb.String(); !strings.HasPrefix(got, "mutate: 3 of 3 programs,") || strings.Count(got, "\n") != 1 {
		t.Fatalf("got %q, want one line \"mutate: 3 of 3 programs, ...\"", got)
	}
}

func TestNilWriterAndConcurrency(t *testing.T) {
	c := New(nil, "x", "items", 1000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 125 {
				c.Add(1)
			}
		}()
	}
	wg.Wait()
	c.Finish()
	if c.done != 1000 {
		t.Fatalf("done %d, want 1000", c.done)
	}
}
