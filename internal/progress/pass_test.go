package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressPlainLines drives the plain (non-terminal) progress with a
// fake clock: one line per interval with passages, % of corpus bytes,
// passages/s and ETA; phases by name.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := NewPass(&buf, 1000, "indexing")
	clock := p.started
	p.now = func() time.Time { return clock }
	for _, tc := range []struct {
		after time.Duration
		bytes int64
		n     int
		want  string // "" for no line
	}{
		{5 * time.Second, 100, 500, ""},
		{10 * time.Second, 250, 1000, "indexing: 1000 passages, 25.0% of corpus bytes read, 100 passages/s, ETA 30s\n"},
		{15 * time.Second, 300, 1500, ""},
		{40 * time.Second, 800, 4000, "indexing: 4000 passages, 80.0% of corpus bytes read, 100 passages/s, ETA 10s\n"},
	} {
		buf.Reset()
		clock = p.started.Add(tc.after)
		p.Update(tc.bytes, tc.n)
		if buf.String() != tc.want {
			t.Errorf("at %v: %q, want %q", tc.after, buf.String(), tc.want)
		}
	}
	// Unknown size (a pipe): no percentage, no ETA.
	buf.Reset()
	p.total = -1
	clock = clock.Add(time.Minute)
	p.Update(900, 5000)
	if want := "indexing: 5000 passages, 50 passages/s\n"; buf.String() != want {
		t.Errorf("unknown size: %q, want %q", buf.String(), want)
	}
	buf.Reset()
	p.Phase("merging BM25 runs", true)
	p.Phase("writing", true)
	p.Finish()
	if want := "phase: merging BM25 runs\nphase: writing\n"; !strings.HasPrefix(buf.String(), want) {
		t.Errorf("phases: %q, want prefix %q", buf.String(), want)
	}
	q := NewPass(nil, 10, "indexing")
	q.Update(5, 5)
	q.Phase("x", true)
	q.Finish()
}
