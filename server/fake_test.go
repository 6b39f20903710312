package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rlsearch/rlsearch"
)

// fakeDocs is an in-memory DocSource.
type fakeDocs []rlsearch.Document

func (d fakeDocs) Len() int { return len(d) }

func (d fakeDocs) Doc(row int32) (rlsearch.Document, error) {
	if row < 0 || int(row) >= len(d) {
		return rlsearch.Document{}, fmt.Errorf("fake: row %d out of range [0, %d)", row, len(d))
	}
	return d[row], nil
}

// testCorpus is a small corpus with awkward text: quotes, HTML, control
// characters, non-ASCII, U+2028.
var testCorpus = fakeDocs{
	{ID: "0", Contents: rlsearch.MakeContents("Paris", "Paris is the capital of France.")},
	{ID: "1", Contents: rlsearch.MakeContents("France", "France is a country in Europe; its capital is Paris.")},
	{ID: "doc-2", Contents: rlsearch.MakeContents("Tokyo", "Tokyo is the capital of Japan. <b>&</b> café ☕")},
	{ID: "3", Contents: rlsearch.MakeContents(`The "Quote"`, "back\\slash\ttab\x01ctl\u2028sep")},
	{ID: "4", Contents: rlsearch.MakeContents("Europe", "Europe is a continent.")},
	{ID: "5", Contents: rlsearch.MakeContents("Japan", "Japan is an island country in Asia.")},
	{ID: "6", Contents: rlsearch.MakeContents("Berlin", "Berlin is the capital of Germany.")},
}

// tokenRetriever scores a passage by the fraction of its tokens that occur
// in the query: deterministic, with ties, and with scores that are not
// exact in float32 (1/3, 2/7, ...). Blank queries get an empty list.
// Trigger words make it misbehave on purpose.
type tokenRetriever struct {
	name   string
	docs   [][]string
	calls  atomic.Int64
	nq     atomic.Int64 // queries seen
	delay  time.Duration
	tricks bool // honour the trigger words below

	block chan struct{} // when non-nil, Retrieve waits on it (or ctx)
	enter chan struct{} // when non-nil, Retrieve signals it on entry
	slow  time.Duration // when non-zero, Retrieve sleeps this long after entry, ignoring ctx
	left  atomic.Int64  // Retrieve calls that have returned
}

func newTokenRetriever(name string, docs fakeDocs) *tokenRetriever {
	t := &tokenRetriever{name: name}
	for _, d := range docs {
		t.docs = append(t.docs, tokens(d.Contents))
	}
	return t
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	})
}

func (t *tokenRetriever) Name() string { return t.name }

// PrefixStable is true: the top k by (score, row) is exact.
func (t *tokenRetriever) PrefixStable() bool { return true }

func (t *tokenRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	t.calls.Add(1)
	t.nq.Add(int64(len(queries)))
	defer t.left.Add(1)
	if t.enter != nil {
		t.enter <- struct{}{}
	}
	if t.slow > 0 {
		time.Sleep(t.slow)
	}
	if t.block != nil {
		select {
		case <-t.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if t.delay > 0 {
		time.Sleep(t.delay)
	}
	if k < 1 {
		return nil, fmt.Errorf("fake: k=%d: %w", k, rlsearch.ErrBadInput)
	}
	out := make([][]rlsearch.Hit, len(queries))
	for i, q := range queries {
		if t.tricks {
			switch q {
			case "bad!input":
				return nil, fmt.Errorf("fake: query %d is unacceptable: %w", i, rlsearch.ErrBadInput)
			case "fail!":
				return nil, fmt.Errorf("fake: index corrupted")
			case "panic!":
				panic("fake: boom")
			case "row!":
				out[i] = []rlsearch.Hit{{Row: int32(len(t.docs)), Score: 1}}
				continue
			case "pad!":
				// A short top-k padded with -1 and a repeated row.
				out[i] = []rlsearch.Hit{{Row: 1, Score: 2}, {Row: 1, Score: 2}, {Row: 0, Score: 1}, {Row: -1}, {Row: -1}}
				continue
			case "nan!":
				out[i] = []rlsearch.Hit{{Row: 0, Score: 1}, {Row: 1, Score: float32(math.NaN())}}
				continue
			case "inf!":
				out[i] = []rlsearch.Hit{{Row: 2, Score: float32(math.Inf(1))}}
				continue
			case "cancel!":
				return nil, fmt.Errorf("fake: %w", context.Canceled)
			}
		}
		qt := tokens(q)
		var hits []rlsearch.Hit
		for row, dt := range t.docs {
			m := 0
			for _, w := range dt {
				if slices.Contains(qt, w) {
					m++
				}
			}
			if m > 0 {
				hits = append(hits, rlsearch.Hit{Row: int32(row), Score: float32(m) / float32(len(dt))})
			}
		}
		slices.SortFunc(hits, func(a, b rlsearch.Hit) int {
			if rlsearch.Less(a, b) {
				return -1
			}
			if rlsearch.Less(b, a) {
				return 1
			}
			return 0
		})
		if len(hits) > k {
			hits = hits[:k]
		}
		out[i] = hits
	}
	return out, nil
}

// fixedRetriever answers each query from a table; unknown queries get no
// hits.
type fixedRetriever map[string][]rlsearch.Hit

func (f fixedRetriever) Name() string { return "fixed" }

func (f fixedRetriever) Retrieve(ctx context.Context, queries []string, k int) ([][]rlsearch.Hit, error) {
	out := make([][]rlsearch.Hit, len(queries))
	for i, q := range queries {
		h := f[q]
		out[i] = h[:min(k, len(h))]
	}
	return out, nil
}

// quietLogger discards everything.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// syncBuffer is a concurrency-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// itoa is strconv.Itoa, short for table tests.
func itoa(n int) string { return strconv.Itoa(n) }
