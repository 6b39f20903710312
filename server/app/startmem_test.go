package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rlsearch/rlsearch/server"
)

// TestStartMemoryAfterRelease: an open that frees more than it keeps (64
// MiB touched, dropped and returned to the OS, as --hnsw-compressed
// releases the float vectors it compressed) still reports positive
// figures, and the peak holds the freed 64 MiB. The after − before
// difference that the start memory used to be is negative here.
func TestStartMemoryAfterRelease(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the RSS figures come from /proc")
	}
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	before := readStartMemory()
	runtime.KeepAlive(buf)
	buf = nil
	runtime.GC()
	debug.FreeOSMemory()
	got := readStartMemory()
	t.Logf("VmRSS %d before, %d after (the old difference %d), VmHWM %d, heap %d", before.RSS, got.RSS, got.RSS-before.RSS, got.PeakRSS, got.Heap)
	if got.RSS <= 0 || got.PeakRSS < got.RSS || got.Heap <= 0 {
		t.Errorf("start memory %+v: want RSS > 0, peak >= RSS, heap > 0 (absolute figures of the process)", got)
	}
	if got.PeakRSS < 64<<20 {
		t.Errorf("peak RSS %d below the 64 MiB the process held", got.PeakRSS)
	}
}

// TestCorpusStartMemory: every corpus's "corpus loaded" log line and its
// /healthz "corpus" report the process's RSS, peak RSS and heap after it
// opened: positive, the peak at least the RSS, and the /healthz keys those
// of before (rss_bytes_at_start, heap_bytes_at_start) plus
// peak_rss_bytes_at_start. A negative figure (the difference they
// replaced, under --hnsw-compressed) fails.
func TestCorpusStartMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the RSS figures come from /proc")
	}
	dir := tinyIndex(t)
	var log bytes.Buffer
	m, err := NewMulti(context.Background(), Config{Logger: slog.New(slog.NewJSONHandler(&log, nil))}, []Corpus{{Name: "a", Dir: dir}, {Name: "b", Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	positive := func(where string, rss, peak, heap float64) {
		t.Helper()
		if rss <= 0 || peak < rss || heap <= 0 {
			t.Errorf("%s: rss %v, peak %v, heap %v; want rss > 0, peak >= rss, heap > 0", where, rss, peak, heap)
		}
	}
	lines := 0
	for _, l := range strings.Split(log.String(), "\n") {
		var raw map[string]any
		if json.Unmarshal([]byte(l), &raw) != nil || raw["msg"] != "corpus loaded" {
			continue
		}
		lines++
		for _, k := range []string{"rss_bytes", "peak_rss_bytes", "heap_bytes"} {
			if _, ok := raw[k].(float64); !ok {
				t.Errorf("corpus loaded line without a number %s: %s", k, l)
			}
		}
		rss, _ := raw["rss_bytes"].(float64)
		peak, _ := raw["peak_rss_bytes"].(float64)
		heap, _ := raw["heap_bytes"].(float64)
		corpus, _ := raw["corpus"].(string)
		positive("log of corpus "+strconv.Quote(corpus), rss, peak, heap)
	}
	if lines != 2 {
		t.Errorf("%d corpus loaded lines, want 2:\n%s", lines, log.String())
	}
	root, err := m.Corpora.Handler(server.ProfileSearchR1, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/c/"+name+"/healthz", nil))
		var h struct {
			Corpus map[string]any `json:"corpus"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil {
			t.Fatal(err)
		}
		num := func(k string) float64 {
			v, ok := h.Corpus[k].(float64)
			if !ok {
				t.Errorf("/c/%s/healthz corpus: no number %s: %v", name, k, h.Corpus)
			}
			return v
		}
		positive("/c/"+name+"/healthz", num("rss_bytes_at_start"), num("peak_rss_bytes_at_start"), num("heap_bytes_at_start"))
	}
}
