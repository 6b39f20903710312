package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rlsearch/rlsearch"
)

// BenchmarkRetrieveHTTP measures requests/s through the handler with the
// fake backend at a concurrency of 32 goroutines, directly (handler) and
// over loopback TCP with keep-alive (tcp). The fake retriever is cheap, so
// this is the server's own overhead: decoding, validation, document
// lookup, encoding, metrics and logging (to a discarding handler).
func BenchmarkRetrieveHTTP(b *testing.B) {
	const concurrency = 32
	var docs fakeDocs
	for i := range 1000 {
		docs = append(docs, rlsearch.Document{ID: fmt.Sprint(i),
			Contents: rlsearch.MakeContents(fmt.Sprintf("Title %d", i), strings.Repeat(fmt.Sprintf("w%d passage text ", i%50), 12))})
	}
	r := fixedRetriever{}
	for q := range 16 {
		var hits []rlsearch.Hit
		for j := range 10 {
			hits = append(hits, rlsearch.Hit{Row: int32((q*37 + j*11) % len(docs)), Score: float32(10-j) / 7})
		}
		r[fmt.Sprint("q", q)] = hits
	}
	s, err := New(Config{Retrievers: map[string]rlsearch.Retriever{"bm25": r}, Docs: docs, Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	for _, shape := range []struct {
		name string
		body string
	}{
		{"queries=1/topk=3", `{"queries":["q1"],"topk":3,"return_scores":true}`},
		{"queries=8/topk=10", `{"queries":["q1","q2","q3","q4","q5","q6","q7","q8"],"topk":10,"return_scores":true}`},
	} {
		par := (concurrency + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
		b.Run("handler/"+shape.name, func(b *testing.B) {
			h := s.Handler()
			b.SetParallelism(par)
			b.ReportAllocs()
			var failed atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/retrieve", strings.NewReader(shape.body))
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != 200 {
						failed.Add(1)
					}
				}
			})
			if failed.Load() > 0 {
				b.Fatalf("%d requests failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
		b.Run("tcp/"+shape.name, func(b *testing.B) {
			srv := httptest.NewServer(s.Handler())
			defer srv.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: concurrency * 2}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			b.SetParallelism(par)
			var failed atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := client.Post(srv.URL+"/retrieve", "application/json", strings.NewReader(shape.body))
					if err != nil {
						failed.Add(1)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						failed.Add(1)
					}
				}
			})
			if failed.Load() > 0 {
				b.Fatalf("%d requests failed", failed.Load())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
