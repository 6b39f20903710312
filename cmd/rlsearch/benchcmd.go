package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rlsearch/rlsearch/bench"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var (
		s           serveFlags
		questions   string
		dur         time.Duration
		k           int
		concurrency int
	)
	s.bind(fs)
	fs.StringVar(&questions, "questions", defaultQuestions(), "question set JSONL used as the query workload")
	fs.DurationVar(&dur, "duration", 3*time.Second, "time spent on each measurement")
	fs.IntVar(&k, "k", 10, "top-k per query")
	fs.IntVar(&concurrency, "concurrency", 32, "concurrent HTTP clients for the /retrieve measurement")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	qs, err := bench.LoadQuestions(questions)
	if err != nil {
		return err
	}
	texts := make([]string, len(qs))
	for i, q := range qs {
		texts[i] = q.Question
	}
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	srv, ix, closeAll, err := s.newServer(ctx, logger)
	if err != nil {
		return err
	}
	defer closeAll()

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "measurement\tvalue\tunit\tnotes\n")
	row := func(name string, v float64, unit, note string) {
		fmt.Fprintf(tw, "%s\t%.1f\t%s\t%s\n", name, v, unit, note)
	}
	row("index build", float64(ix.Meta.NumDocs)/ix.Meta.BuildSeconds, "passages/s", fmt.Sprintf("%d passages in %.1fs (meta.json)", ix.Meta.NumDocs, ix.Meta.BuildSeconds))

	// BM25, one query per call and whole batches.
	n, el := loop(dur, func(i int) int { ix.BM25.Search(texts[i%len(texts)], k); return 1 })
	row("bm25 search, batch 1", float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("k=%d, one goroutine", k))
	n, el = loop(dur, func(i int) int { ix.BM25.SearchBatch(ctx, texts, k); return len(texts) })
	row(fmt.Sprintf("bm25 search, batch %d", len(texts)), float64(n)/el.Seconds(), "queries/s", "SearchBatch over all cores")

	if e5, ok := ix.Retrievers()["e5"]; ok {
		vecs, err := ix.Encoder().EncodeQueries(ctx, texts)
		if err != nil {
			return err
		}
		d := ix.Dense.Dim()
		for _, b := range []int{1, 64} {
			nq := len(texts)
			n, el = loop(dur, func(i int) int {
				lo := (i * b) % (nq - b + 1)
				ix.Dense.Search(ctx, vecs[lo*d:(lo+b)*d], k)
				return b
			})
			row(fmt.Sprintf("dense flat search, batch %d", b), float64(n)/el.Seconds(), "queries/s", fmt.Sprintf("%d × %d %s, k=%d, vectors only", ix.Dense.Len(), d, ix.Dense.Header().DType, k))
		}
		n, el = loop(dur, func(i int) int {
			lo := (i * 64) % (len(texts) - 64 + 1)
			e5.Retrieve(ctx, texts[lo:lo+64], k)
			return 64
		})
		row("e5 retrieve, batch 64", float64(n)/el.Seconds(), "queries/s", "encoder + flat search")
	}

	// HTTP /retrieve at the given concurrency, one query per request.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/retrieve"
	for _, name := range names(ix.Retrievers()) {
		rps, p50, p99, errs := httpLoad(ctx, url, name, texts, k, concurrency, dur)
		row(fmt.Sprintf("/retrieve %s, concurrency %d", name, concurrency), rps, "requests/s",
			fmt.Sprintf("1 query/request, topk=%d, p50 %.1f ms, p99 %.1f ms, %d errors", k, p50, p99, errs))
	}
	row("peak RSS", float64(peakRSS())/(1<<20), "MiB", "VmHWM of this process: index + server + load generator")
	return nil
}

// loop calls fn until d has passed and returns the summed work and the time.
func loop(d time.Duration, fn func(i int) int) (int, time.Duration) {
	start := time.Now()
	n := 0
	for i := 0; time.Since(start) < d || i == 0; i++ {
		n += fn(i)
	}
	return n, time.Since(start)
}

// httpLoad runs c clients posting single-query requests for d.
func httpLoad(ctx context.Context, url, retriever string, texts []string, k, c int, d time.Duration) (rps, p50, p99 float64, errs int) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}, Timeout: 30 * time.Second}
	var mu sync.Mutex
	var lat []float64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			var mine []float64
			bad := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				body, _ := json.Marshal(map[string]any{"queries": []string{texts[rng.Intn(len(texts))]}, "topk": k, "return_scores": true, "retriever": retriever})
				t0 := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					bad++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, float64(time.Since(t0).Microseconds())/1000)
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}(int64(w))
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	if len(lat) == 0 {
		return 0, 0, 0, errs
	}
	slices.Sort(lat)
	return float64(len(lat)) / el, lat[len(lat)/2], lat[len(lat)*99/100], errs
}

// peakRSS is the process's peak resident set size in bytes (VmHWM), or 0.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
